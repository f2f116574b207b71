//! Cortex-M: cortex-m-rt start-up (with `paint-stack`), semihosting log and exit
//! code, SysTick as the instruction counter under `qemu -icount shift=0`.

use core::fmt::Write;

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m_rt::{ExceptionFrame, entry, exception};
use cortex_m_semihosting::{debug, hio};

/// Shown in the log: the target triple (set by build.rs).
pub const NAME: &str = env!("QNMC_TARGET");

struct Semihosting(Option<hio::HostStream>);

impl Write for Semihosting {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        match self.0.as_mut() {
            Some(h) => h.write_str(s),
            None => Ok(()),
        }
    }
}

unsafe extern "C" {
    static mut _stack_start: u32;
    static mut _stack_end: u32;
}

const PAINT: u32 = 0xCCCC_CCCC;

/// Paints the free stack again, from its bottom up to 64 bytes below the
/// current frame, so that [`peak_stack`] then measures what runs next (no
/// interrupt is enabled, so nothing else uses that memory).
#[inline(never)]
pub fn repaint_stack() {
    let sp: usize;
    // SAFETY: reads a register.
    unsafe { core::arch::asm!("mov {0}, sp", out(reg) sp, options(nomem, nostack)) };
    let bottom = core::ptr::addr_of!(_stack_end) as usize;
    let limit = (sp - 64) & !3;
    let mut p = bottom;
    while p < limit {
        // SAFETY: free stack memory below the live frames.
        unsafe { core::ptr::write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
}

/// Bytes of stack used since the last paint (cortex-m-rt's before `main`, or
/// [`repaint_stack`]): the distance from the top of the stack to the lowest
/// word no longer holding the paint (0xCCCC_CCCC); and the stack's size.
pub fn peak_stack() -> (usize, usize) {
    let top = core::ptr::addr_of!(_stack_start) as usize;
    let bottom = core::ptr::addr_of!(_stack_end) as usize;
    let mut p = bottom;
    while p < top {
        // SAFETY: p is a word-aligned address inside the stack region of the linker script.
        let w = unsafe { core::ptr::read_volatile(p as *const u32) };
        if w != PAINT {
            break;
        }
        p += 4;
    }
    (top - p, top - bottom)
}

/// A monotonic counter built on SysTick (24-bit, counting down from the reload
/// value at the core clock). Polled at least once per 2²⁴ ticks, it never misses
/// a wrap.
pub fn counter() -> impl FnMut() -> u64 {
    let mut p = match cortex_m::Peripherals::take() {
        Some(p) => p,
        None => loop {
            debug::exit(debug::EXIT_FAILURE);
        },
    };
    p.SYST.set_clock_source(SystClkSource::Core);
    p.SYST.set_reload(0x00FF_FFFF);
    p.SYST.clear_current();
    p.SYST.enable_counter();
    let mut last = cortex_m::peripheral::SYST::get_current();
    let mut total = 0u64;
    move || {
        let now = cortex_m::peripheral::SYST::get_current();
        total += (last.wrapping_sub(now) & 0x00FF_FFFF) as u64;
        last = now;
        total
    }
}

/// Exactly 2 instructions per iteration (`subs`, `bne`), plus a constant.
#[inline(never)]
pub fn calibration_loop(iterations: u32) {
    // SAFETY: a register-only loop.
    unsafe {
        core::arch::asm!(
            "2:",
            "subs r0, #1",
            "bne 2b",
            inout("r0") iterations => _,
            options(nomem, nostack)
        );
    }
}

#[entry]
fn main() -> ! {
    let mut out = Semihosting(hio::hstdout().ok());
    let (ok, jobs_peak) = super::run(&mut out);
    // The jobs repaint the stack: the program's peak is the largest of their
    // peaks and of what ran after the last repaint.
    let (used, size) = peak_stack();
    let used = used.max(jobs_peak);
    let _ = writeln!(out, "peak stack: {used} of {size} bytes");
    let _ = writeln!(out, "result: {}", if ok { "PASS" } else { "FAIL" });
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    loop {
        cortex_m::asm::nop();
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let mut out = Semihosting(hio::hstdout().ok());
    let _ = writeln!(out, "panic: {info}");
    loop {
        debug::exit(debug::EXIT_FAILURE);
    }
}

#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    let mut out = Semihosting(hio::hstdout().ok());
    let _ = writeln!(out, "hard fault: {frame:?}");
    loop {
        debug::exit(debug::EXIT_FAILURE);
    }
}
