//! The signals that ask the program to stop (SIGTERM, SIGHUP, SIGINT), as a
//! value to wait for, so that the dashboard and the demo stop the way `q`
//! does: terminal restored, workload and server stopped, summary printed.
//!
//! Once [`StopSignals::install`] has run, these signals no longer kill the
//! process: whoever installed them must wait for them and stop. The exit
//! code after a signal is the shell's convention, 128 + the signal number
//! (130 SIGINT, 143 SIGTERM, 129 SIGHUP), so scripts see the same code as
//! for a program killed by it.

use std::io;

/// A signal asking the program to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT (Ctrl-C outside the dashboard's raw mode, `kill -INT`).
    Interrupt,
    /// SIGTERM (`kill`, service managers).
    Terminate,
    /// SIGHUP (the terminal went away: closed window, lost ssh session).
    Hangup,
}

impl StopSignal {
    /// The signal's conventional name, e.g. `SIGTERM`.
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
            StopSignal::Hangup => "SIGHUP",
        }
    }

    /// The process exit code after stopping on this signal: 128 + its number.
    pub fn exit_code(self) -> i32 {
        128 + match self {
            StopSignal::Hangup => 1,
            StopSignal::Interrupt => 2,
            StopSignal::Terminate => 15,
        }
    }
}

/// The three stop signals, caught. Several may exist at once (each one is
/// told of every signal).
#[derive(Debug)]
pub struct StopSignals {
    #[cfg(unix)]
    streams: [(StopSignal, tokio::signal::unix::Signal); 3],
}

impl StopSignals {
    /// Catches SIGTERM, SIGHUP and SIGINT from now on (needs a tokio runtime).
    #[cfg(unix)]
    pub fn install() -> io::Result<StopSignals> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(StopSignals {
            streams: [
                (StopSignal::Interrupt, signal(SignalKind::interrupt())?),
                (StopSignal::Terminate, signal(SignalKind::terminate())?),
                (StopSignal::Hangup, signal(SignalKind::hangup())?),
            ],
        })
    }

    /// Catches Ctrl-C from now on (the only stop signal there is here).
    #[cfg(not(unix))]
    pub fn install() -> io::Result<StopSignals> {
        Ok(StopSignals {})
    }

    /// Waits for the next stop signal.
    #[cfg(unix)]
    pub async fn recv(&mut self) -> StopSignal {
        let [(a, sa), (b, sb), (c, sc)] = &mut self.streams;
        tokio::select! {
            _ = sa.recv() => *a,
            _ = sb.recv() => *b,
            _ = sc.recv() => *c,
        }
    }

    /// Waits for the next stop signal.
    /// Drops the signals already delivered to this set and not yet
    /// received, and says how many. Every installed set is told of every
    /// signal, so after another set (the dashboard's) has stopped on one,
    /// this one holds the same signal: without this, it would read as a
    /// second one ("again") and cut the orderly stop short.
    pub fn discard_pending(&mut self) -> usize {
        use futures::FutureExt;
        let mut discarded = 0;
        while self.recv().now_or_never().is_some() {
            discarded += 1;
        }
        discarded
    }

    #[cfg(not(unix))]
    pub async fn recv(&mut self) -> StopSignal {
        match tokio::signal::ctrl_c().await {
            Ok(()) => StopSignal::Interrupt,
            Err(_) => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every installed set in this process sees every signal these tests
    /// send: they run one at a time.
    #[cfg(unix)]
    static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

    #[test]
    fn exit_codes_follow_the_shell_convention() {
        assert_eq!(StopSignal::Interrupt.exit_code(), 130);
        assert_eq!(StopSignal::Terminate.exit_code(), 143);
        assert_eq!(StopSignal::Hangup.exit_code(), 129);
    }

    /// One SIGINT reaches every installed set; the set that did not stop on
    /// it discards it, so it cannot be taken for a second signal.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_signal_seen_by_another_set_is_discarded_not_taken_twice() {
        use futures::FutureExt;
        let _one = ONE_AT_A_TIME.lock().await;
        let mut outer = StopSignals::install().unwrap();
        let mut inner = StopSignals::install().unwrap();
        let pid = std::process::id().to_string();
        let status = std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap();
        assert!(status.success());
        let got = tokio::time::timeout(std::time::Duration::from_secs(10), inner.recv())
            .await
            .unwrap();
        assert_eq!(got, StopSignal::Interrupt);
        assert_eq!(outer.discard_pending(), 1, "the outer set was told too");
        assert!(outer.recv().now_or_never().is_none());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_caught_signal_is_received_not_fatal() {
        let _one = ONE_AT_A_TIME.lock().await;
        let mut signals = StopSignals::install().unwrap();
        let pid = std::process::id().to_string();
        let status = std::process::Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap();
        assert!(status.success());
        let got = tokio::time::timeout(std::time::Duration::from_secs(10), signals.recv())
            .await
            .unwrap();
        assert_eq!(got, StopSignal::Hangup);
    }
}
