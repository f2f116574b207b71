#!/usr/bin/env python3
"""Berkeley-style `size` of a 32- or 64-bit little-endian ELF file, from its
section headers (no binutils for ARM/RISC-V needed).

text = allocated, non-writable sections (code, read-only data, vector table);
data = allocated, writable sections with contents; bss = allocated sections
without contents (NOBITS). Sections named .stack or .heap (riscv-rt's
placeholders for the whole free RAM) are left out.

Flash = text + data (the initial values of .data live in flash);
static RAM = data + bss.

Usage: elf-size.py FILE...   prints "text data bss flash ram file" per file.
"""
import struct
import sys

SHT_NOBITS = 8
SHF_WRITE = 0x1
SHF_ALLOC = 0x2


def sizes(path):
    with open(path, "rb") as f:
        elf = f.read()
    if elf[:4] != b"\x7fELF":
        raise SystemExit(f"{path}: not an ELF file")
    is64 = elf[4] == 2
    if elf[5] != 1:
        raise SystemExit(f"{path}: not little-endian")
    if is64:
        shoff, = struct.unpack_from("<Q", elf, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    else:
        shoff, = struct.unpack_from("<I", elf, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x2E)
    sections = []
    for i in range(shnum):
        off = shoff + i * shentsize
        if is64:
            name, stype, flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", elf, off)
        else:
            name, stype, flags, _addr, offset, size = struct.unpack_from("<IIIIII", elf, off)
        sections.append((name, stype, flags, offset, size))
    strtab = sections[shstrndx]
    def section_name(idx):
        start = strtab[3] + idx
        return elf[start:elf.index(b"\0", start)].decode()
    text = data = bss = 0
    for name, stype, flags, _offset, size in sections:
        if not flags & SHF_ALLOC or section_name(name) in (".stack", ".heap"):
            continue
        if stype == SHT_NOBITS:
            bss += size
        elif flags & SHF_WRITE:
            data += size
        else:
            text += size
    return text, data, bss


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    print(f"{'text':>8} {'data':>8} {'bss':>8} {'flash':>8} {'ram':>8} file")
    for path in sys.argv[1:]:
        text, data, bss = sizes(path)
        print(f"{text:>8} {data:>8} {bss:>8} {text + data:>8} {data + bss:>8} {path}")


if __name__ == "__main__":
    main()
