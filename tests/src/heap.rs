//! A counting global allocator for the no-heap tests.
//!
//! [`CountingAllocator`] wraps the system allocator; a test binary installs it
//! with `#[global_allocator] static GLOBAL: CountingAllocator = CountingAllocator;`
//! and measures a region with [`count_heap`].
//!
//! Counting is per thread: the test harness runs tests on parallel threads, so a
//! thread-local "measuring" flag decides whether an allocation is counted and a
//! thread-local counter records it. Only the code inside [`count_heap`] on the
//! calling thread is measured. Everything that legitimately allocates (building
//! a target, formatting a failure message) belongs outside that region.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Wraps the system allocator and counts heap events made by a thread whose
/// `MEASURING` flag is set (see [`count_heap`]).
pub struct CountingAllocator;

thread_local! {
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    static EVENTS: Cell<usize> = const { Cell::new(0) };
}

fn record() {
    // `try_with`: never panic inside the allocator (e.g. during thread teardown).
    let measuring = MEASURING.try_with(Cell::get).unwrap_or(false);
    if measuring {
        let _ = EVENTS.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every method forwards to `System` unchanged; the counting touches only
// const-initialised thread-locals without destructors, which never allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        record();
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `f` with counting switched on for this thread and returns the number of
/// heap events (alloc, alloc_zeroed, realloc, dealloc) it caused.
///
/// The count is meaningful only in a binary that installs [`CountingAllocator`]
/// as its `#[global_allocator]`; otherwise it is always 0, which is why every
/// `no_heap` module of the `conformance` binary keeps a positive control
/// showing the counter counts.
pub fn count_heap<R>(f: impl FnOnce() -> R) -> (usize, R) {
    EVENTS.with(|c| c.set(0));
    MEASURING.with(|m| m.set(true));
    let out = f();
    MEASURING.with(|m| m.set(false));
    (EVENTS.with(Cell::get), out)
}
