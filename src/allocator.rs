//! The allocator of every program built on this library (the binary, its
//! tests and benches alike), and how long it holds memory it freed before
//! giving it back to the system.
//!
//! Reading a cluster's answers builds and drops tens of thousands of small
//! JSON values per poll: the system allocator's bookkeeping was about 40 %
//! of a poll's instructions (BENCHMARKS.md, "The poll's allocations"), so
//! the allocator is mimalloc. mimalloc returns freed memory to the system
//! after 1 s, shorter than the dashboard's 2 s between polls: every poll
//! then took its memory back page by page, each page a fault the kernel
//! serves (about 1 400 faults and 7 ms of system CPU on the first poll of
//! the fullest incident, 1.7 ms on every later one: BENCHMARKS.md, "The
//! first poll's page faults"). [`hold_freed_memory`] holds it across polls.
//!
//! mimalloc is built without transparent huge pages (`libmimalloc-sys`'s
//! `no_thp` feature, `Cargo.toml`): it asked the kernel for 2 MiB pages over
//! its whole arena, and on a system whose huge pages are `madvise` (most
//! distributions) every region it touched then took 2 MiB of memory: the
//! dashboard's peak RSS went from 37 to 72–87 MiB, past issue 18's 40 MB;
//! without them it is 39–41 MiB, at the same CPU.

use std::time::Duration;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: its place in `mi_option_e`
/// (`mimalloc.h`, the same in mimalloc 2 and 3), which the sys crate does
/// not name ("for stability reasons"); a unit test checks that it is the
/// purge delay of the mimalloc linked in.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// The least time freed memory is held, whatever the interval.
pub const HOLD_AT_LEAST: Duration = Duration::from_secs(10);

/// Holds the memory the program frees for `max(10 s, 3 × every)` before
/// returning it to the system, so a program that repeats its work `every`
/// so often (a poller) reuses its memory instead of faulting it back in
/// each time. What stays held is the program's own peak, bounded by what
/// one poll reads. Call it first thing, before other threads start
/// (mimalloc's options are not set atomically).
pub fn hold_freed_memory(every: Duration) {
    let hold = HOLD_AT_LEAST.max(every.saturating_mul(3));
    let ms = std::os::raw::c_long::try_from(hold.as_millis()).unwrap_or(std::os::raw::c_long::MAX);
    // SAFETY: sets one of mimalloc's options (a plain integer it reads on
    // its next purge); called before the program's other threads start.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, ms) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option set is mimalloc's purge delay: it starts at mimalloc 3's
    /// documented default (1 000 ms, no other option's), and holds what
    /// [`hold_freed_memory`] sets.
    #[test]
    fn the_purge_delay_is_the_option_set() {
        // SAFETY: reads an integer option.
        let get = || unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(get(), 1_000);
        }
        hold_freed_memory(Duration::from_secs(2));
        assert_eq!(get(), 10_000);
        hold_freed_memory(Duration::from_secs(60));
        assert_eq!(get(), 180_000);
    }
}
