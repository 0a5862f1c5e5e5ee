//! How often the audit may run in the background (the dashboard's audit
//! pane, the exporter's `estx_audit_findings`), so that watching a cluster
//! costs the same at any scale.
//!
//! The audit reads every account (the exact sum of balances) and every
//! in-flight transaction: at 25 000 in flight it is dozens of requests and
//! tens of milliseconds of client CPU, where a poll is three requests and
//! about ten. Issue 18 sets the poll's budget at 4 requests and 15 ms of
//! client CPU per poll; the poll itself keeps 3 and about 10, so the audit
//! may add, averaged over the polls between two audits, at most
//! [`REQUESTS_PER_POLL`] request and [`CPU_PER_POLL`] of CPU, and keep the
//! cluster busy for at most one [`BUSY_SHARE`]-th of the time. Each audit
//! measures what it cost ([`AuditCost`]) and the next one is due after the
//! longest gap those three limits ask for, never sooner than [`MIN_GAP`]:
//! a small cluster is audited every 30 s as before, a big one as often as
//! the budget allows. An audit the operator asks for (a key, or after an
//! act) runs at once whatever the pace.

use std::time::Duration;

/// The shortest gap between two background audits.
pub const MIN_GAP: Duration = Duration::from_secs(30);
/// Requests a background audit may add per poll, on average.
pub const REQUESTS_PER_POLL: u64 = 1;
/// Client CPU a background audit may add per poll, on average.
pub const CPU_PER_POLL: Duration = Duration::from_millis(5);
/// A background audit keeps the cluster busy one `BUSY_SHARE`-th of the
/// time at most (its duration times this is the least gap).
pub const BUSY_SHARE: u32 = 10;

/// The dashboard's default poll interval: a watcher polling more slowly
/// (the exporter, every 30 s) paces its audits as if it polled this often,
/// so its audits cost the cluster on average what the dashboard's do.
pub const REFERENCE_POLL: Duration = Duration::from_secs(2);

/// What one audit cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AuditCost {
    /// Requests it sent (retries included).
    pub requests: u64,
    /// This process's CPU (user and system) while it ran: an upper bound,
    /// as whatever else the process did meanwhile (a poll, a frame) counts.
    pub cpu: Duration,
    /// From its start to its answer.
    pub elapsed: Duration,
}

impl AuditCost {
    /// The gap before the next background audit when polls come every
    /// `poll_every`: the longest of [`MIN_GAP`], the polls needed to spread
    /// its requests and its CPU within the budget, and [`BUSY_SHARE`] times
    /// its duration.
    pub fn next_gap(&self, poll_every: Duration) -> Duration {
        let polls_for_requests = self.requests.div_ceil(REQUESTS_PER_POLL);
        let polls_for_cpu = self.cpu.as_nanos().div_ceil(CPU_PER_POLL.as_nanos());
        let polls = u32::try_from(polls_for_requests.max(polls_for_cpu as u64)).unwrap_or(u32::MAX);
        let by_budget = poll_every.saturating_mul(polls);
        let by_time = self.elapsed.saturating_mul(BUSY_SHARE);
        MIN_GAP.max(by_budget).max(by_time)
    }
}

impl std::fmt::Display for AuditCost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} requests, {} ms CPU, {:.1} s",
            self.requests,
            self.cpu.as_millis(),
            self.elapsed.as_secs_f64()
        )
    }
}

/// This process's CPU time so far (user and system); zero where the
/// platform does not say (the gap then rests on requests and duration).
pub fn process_cpu() -> Duration {
    #[cfg(unix)]
    if let Some(usage) = usage() {
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec.max(0) as u64)
                + Duration::from_micros(t.tv_usec.max(0) as u64)
        };
        return tv(usage.ru_utime) + tv(usage.ru_stime);
    }
    Duration::ZERO
}

/// This process's minor page faults so far (memory the allocator took from
/// the system, or gave back and took again: BENCHMARKS.md, "The first
/// poll's page faults"); zero where the platform does not say.
pub fn process_minor_faults() -> u64 {
    #[cfg(unix)]
    if let Some(usage) = usage() {
        return u64::try_from(usage.ru_minflt).unwrap_or(0);
    }
    0
}

/// This process's resource usage, as `getrusage` reports it.
#[cfg(unix)]
fn usage() -> Option<libc::rusage> {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    (unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0).then_some(usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(requests: u64, cpu_ms: u64, elapsed_ms: u64) -> AuditCost {
        AuditCost {
            requests,
            cpu: Duration::from_millis(cpu_ms),
            elapsed: Duration::from_millis(elapsed_ms),
        }
    }

    const POLL: Duration = Duration::from_secs(2);

    #[test]
    fn a_small_audit_runs_every_thirty_seconds() {
        assert_eq!(cost(6, 8, 40).next_gap(POLL), MIN_GAP);
        assert_eq!(AuditCost::default().next_gap(POLL), MIN_GAP);
    }

    #[test]
    fn a_big_audit_is_spread_so_each_poll_carries_one_request_and_five_ms_more() {
        // 40 requests: one more per poll over 40 polls of 2 s.
        assert_eq!(cost(40, 10, 500).next_gap(POLL), Duration::from_secs(80));
        // 300 ms of CPU: 5 ms more per poll over 60 polls.
        assert_eq!(cost(10, 300, 500).next_gap(POLL), Duration::from_secs(120));
        // Slower polls leave room for the same audit sooner in polls, not in time.
        assert_eq!(
            cost(40, 10, 500).next_gap(Duration::from_secs(5)),
            Duration::from_secs(200)
        );
    }

    #[test]
    fn a_slow_audit_keeps_the_cluster_busy_a_tenth_of_the_time_at_most() {
        assert_eq!(cost(5, 5, 9_000).next_gap(POLL), Duration::from_secs(90));
    }

    #[test]
    fn the_budget_over_the_gap_holds_for_any_cost() {
        for requests in [0, 1, 3, 17, 250, 10_000] {
            for cpu_ms in [0, 4, 87, 2_000] {
                let c = cost(requests, cpu_ms, 100);
                let polls = c.next_gap(POLL).as_secs_f64() / POLL.as_secs_f64();
                assert!(requests as f64 / polls <= REQUESTS_PER_POLL as f64, "{c}");
                assert!(
                    cpu_ms as f64 / polls <= CPU_PER_POLL.as_millis() as f64,
                    "{c}"
                );
            }
        }
    }

    #[test]
    fn process_cpu_grows() {
        let before = process_cpu();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        assert!(process_cpu() > before);
    }
}
