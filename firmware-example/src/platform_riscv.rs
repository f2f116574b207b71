//! RISC-V on QEMU `virt`: riscv-rt start-up, log on the 16550 UART at
//! 0x1000_0000, exit code through the SiFive test device at 0x10_0000, and
//! `minstret` as the instruction counter (exact under `qemu -icount shift=0`).

use core::fmt::Write;

/// Shown in the log: the target triple (set by build.rs).
pub const NAME: &str = env!("QNMC_TARGET");

const UART: *mut u8 = 0x1000_0000 as *mut u8;
const TEST_DEVICE: *mut u32 = 0x0010_0000 as *mut u32;

struct Uart;

impl Write for Uart {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for b in s.bytes() {
            // SAFETY: the transmit holding register of QEMU virt's 16550.
            unsafe { core::ptr::write_volatile(UART, b) };
        }
        Ok(())
    }
}

fn exit(code: u32) -> ! {
    let value = if code == 0 {
        0x5555
    } else {
        (code << 16) | 0x3333
    };
    loop {
        // SAFETY: the SiFive test ("finisher") device of QEMU virt.
        unsafe { core::ptr::write_volatile(TEST_DEVICE, value) };
    }
}

unsafe extern "C" {
    static __estack: u32;
    static _stack_start: u32;
}

const PAINT: u32 = 0xCCCC_CCCC;

fn stack_pointer() -> usize {
    let sp: usize;
    // SAFETY: reads a register.
    unsafe { core::arch::asm!("mv {0}, sp", out(reg) sp, options(nomem, nostack)) };
    sp
}

/// Paints the free stack below the current frame (riscv-rt has no
/// paint-stack); called first in `main` and again before each job.
#[inline(never)]
pub fn repaint_stack() {
    let bottom = core::ptr::addr_of!(__estack) as usize;
    let limit = (stack_pointer() - 256) & !3;
    let mut p = (bottom + 3) & !3;
    while p < limit {
        // SAFETY: free stack memory below the live frames.
        unsafe { core::ptr::write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
}

/// Bytes of stack used since the last paint, and the stack's size.
pub fn peak_stack() -> (usize, usize) {
    let top = core::ptr::addr_of!(_stack_start) as usize;
    let bottom = (core::ptr::addr_of!(__estack) as usize + 3) & !3;
    let mut p = bottom;
    while p < top {
        // SAFETY: word-aligned address inside the stack region.
        let w = unsafe { core::ptr::read_volatile(p as *const u32) };
        if w != PAINT {
            break;
        }
        p += 4;
    }
    (top - p, top - bottom)
}

fn minstret() -> u64 {
    loop {
        let (hi, lo, hi2): (u32, u32, u32);
        // SAFETY: reads the instret counter CSRs.
        unsafe {
            core::arch::asm!(
                "csrr {0}, minstreth",
                "csrr {1}, minstret",
                "csrr {2}, minstreth",
                out(reg) hi, out(reg) lo, out(reg) hi2,
                options(nomem, nostack)
            );
        }
        if hi == hi2 {
            return ((hi as u64) << 32) | lo as u64;
        }
    }
}

/// The instruction counter.
pub fn counter() -> impl FnMut() -> u64 {
    minstret
}

/// Exactly 2 instructions per iteration (`addi`, `bnez`), plus a constant.
#[inline(never)]
pub fn calibration_loop(iterations: u32) {
    // SAFETY: a register-only loop.
    unsafe {
        core::arch::asm!(
            "2:",
            "addi {0}, {0}, -1",
            "bnez {0}, 2b",
            inout(reg) iterations => _,
            options(nomem, nostack)
        );
    }
}

#[riscv_rt::entry]
fn main() -> ! {
    repaint_stack();
    let mut out = Uart;
    let (ok, jobs_peak) = super::run(&mut out);
    let (used, size) = peak_stack();
    let used = used.max(jobs_peak);
    let _ = writeln!(
        out,
        "peak stack: {used} of {size} bytes (painted below main's frame)"
    );
    let _ = writeln!(out, "result: {}", if ok { "PASS" } else { "FAIL" });
    exit(if ok { 0 } else { 1 })
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let _ = writeln!(Uart, "panic: {info}");
    exit(101)
}
