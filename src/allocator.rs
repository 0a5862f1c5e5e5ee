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
//! first poll's page faults"). [`set_up`] holds it across polls.
//!
//! Nor does the program take transparent huge pages: mimalloc asked the
//! kernel for 2 MiB pages over its whole arena, and every region it touched
//! then took 2 MiB of memory: the dashboard's peak RSS went from 37 to
//! 72–87 MiB, past issue 18's 40 MB; without them it is 39–41 MiB, at the
//! same CPU. mimalloc is built not to ask (`libmimalloc-sys`'s `no_thp`
//! feature, `Cargo.toml`: what a system whose huge pages are `madvise`
//! needs, as most distributions), and [`set_up`] turns them off for the
//! process (what a system whose huge pages are `always` needs, as RHEL's).

use std::time::Duration;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: its place in `mi_option_e`
/// (`mimalloc.h`, the same in mimalloc 2 and 3), which the sys crate does
/// not name ("for stability reasons"); a unit test checks that it is the
/// purge delay of the mimalloc linked in.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// The least time freed memory is held, whatever the interval.
const HOLD_AT_LEAST: Duration = Duration::from_secs(10);

/// Sets the allocator up for a program that repeats its work `poll_every`
/// so often (a poller): it holds the memory it frees for
/// `max(10 s, 3 × poll_every)` before returning it to the system, so each
/// poll reuses its memory instead of faulting it back in (what stays held
/// is the program's own peak, bounded by what one poll reads); and the
/// process takes no transparent huge pages (see the module). Call it first
/// thing, before other threads start (mimalloc's options are not set
/// atomically).
pub fn set_up(poll_every: Duration) {
    let hold = HOLD_AT_LEAST.max(poll_every.saturating_mul(3));
    let ms = std::os::raw::c_long::try_from(hold.as_millis()).unwrap_or(std::os::raw::c_long::MAX);
    // SAFETY: sets one of mimalloc's options (a plain integer it reads on
    // its next purge); called before the program's other threads start.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, ms) };
    no_huge_pages();
}

/// Turns transparent huge pages off for this process (Linux's
/// `PR_SET_THP_DISABLE`: every mapping, those made before too, from the
/// next page fault on; the programs it starts inherit it, as the demo's
/// server). Where it fails (an old kernel) the program runs as before.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a prctl that sets one flag of this process; its answer
        // is not needed (see above).
        let _ = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option set is mimalloc's purge delay: it starts at mimalloc 3's
    /// documented default (1 000 ms, no other option's), and holds what
    /// [`set_up`] sets; and the process then takes no huge pages.
    #[test]
    fn the_purge_delay_is_the_option_set_and_huge_pages_are_off() {
        // SAFETY: reads an integer option.
        let get = || unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(get(), 1_000);
        }
        set_up(Duration::from_secs(2));
        assert_eq!(get(), 10_000);
        #[cfg(target_os = "linux")]
        // SAFETY: reads one flag of this process.
        assert_eq!(
            unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) },
            1
        );
        set_up(Duration::from_secs(60));
        assert_eq!(get(), 180_000);
    }
}
