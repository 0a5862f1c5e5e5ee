//! The dashboard: live panes of transactions by state, accounts and locks,
//! with rollback, forced recovery and lock release on the selected
//! transaction — every action through the protocol module.
//!
//! Shape (after gitui/oxker): one event channel fed by the terminal, the
//! poller and action tasks; [`update::update`] changes [`app::App`] and
//! returns I/O requests; [`ui::render`] is a pure function of the state; the
//! loop below turns commands into tasks. The UI never awaits the network.

pub mod app;
pub mod audit;
pub mod bulk;
pub mod confirm;
pub mod derive;
pub mod event;
pub mod export;
pub mod job_tasks;
pub mod key_ops;
pub mod keymap;
pub mod layers;
pub mod layout;
pub mod load;
pub mod log;
pub mod look;
pub mod mouse;
pub mod others;
pub mod panes;
pub mod poller;
pub mod progress;
pub mod reverse;
pub mod selection;
pub mod settings;
pub mod sort;
pub mod stop;
pub mod task;
pub mod terminal;
pub mod trends;
pub mod ui;
pub mod unseen;
pub mod update;
pub mod view;

use crate::protocol::Protocol;
use crate::signals::{StopSignal, StopSignals};
use app::{App, Settings};
use crossterm::event::{Event as TermEvent, EventStream};
use event::Event;
use futures::StreamExt;
use poller::PollControl;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Longest the loop applies queued events before drawing again (20 frames
/// a second while events keep coming).
const FRAME: Duration = Duration::from_millis(50);

/// How the dashboard runs.
#[derive(Debug, Clone)]
pub struct DashboardOptions {
    /// Poll interval (`--interval`).
    pub interval: Duration,
    /// Disable the three actions (`--read-only`).
    pub read_only: bool,
    /// Most in-flight transactions listed per poll.
    pub cap: usize,
    /// The config profile in use (`--profile`), shown in the header.
    pub profile: Option<String>,
    /// The profile's frame and whether it is production.
    pub mark: Option<app::ProfileMark>,
    /// The expected sum of balances the background audit checks
    /// (`--expect-total`); `None` skips that check.
    pub expect_total: Option<i64>,
    /// The colours and ASCII-only drawing (`--theme`, `--ascii`, the
    /// config file, `NO_COLOR`).
    pub theme: look::Theme,
    /// The key table (the defaults with the config file's rebindings).
    pub keys: keymap::Keymap,
}

/// How a dashboard session ended (the command line turns it into the exit
/// code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The operator quit.
    Quit,
    /// The operator quit during a bulk run: it was stopped cleanly first
    /// and left transactions (their ids written to a file).
    RunStopped,
    /// A stop signal (SIGTERM, SIGHUP or SIGINT, see [`crate::signals`]);
    /// a bulk run in progress was stopped cleanly first.
    Signal(StopSignal),
}

/// Runs the dashboard until the operator quits or a stop signal arrives,
/// and says which ([`Ended`]). A bulk run in progress is never left
/// half-done: quitting during one asks first and waits for its clean
/// stop, a signal stops it cleanly before the dashboard ends
/// ([`stop`]). The terminal is restored on every path out, including
/// errors; panics are covered by the hook in [`terminal::init`].
pub async fn run(proto: Protocol, opts: DashboardOptions) -> std::io::Result<Ended> {
    let config = proto.config().clone();
    let settings = Settings {
        url: proto.cluster().url().to_string(),
        recovery_window: config.recovery_window,
        investigate_after: config.investigate_after,
        read_only: opts.read_only,
        transactions_index: config.indices.transactions.clone(),
        profile: opts.profile.clone(),
        mark: opts.mark.clone(),
        runbooks: config.runbooks.clone(),
        others_unavailable: crate::protocol::jobs::others_unavailable(&config),
    };
    let mut app = App::new(settings, opts.interval, proto.cluster().now());
    app.theme = opts.theme;
    app.keys = opts.keys;
    let (tx, mut rx) = mpsc::unbounded_channel::<Event>();
    let (ctrl_tx, ctrl_rx) = mpsc::unbounded_channel::<PollControl>();

    tokio::spawn(poller::run(
        // A poll is asked again at the next one: its reads wait no longer
        // than the interval (the acts keep the whole `--retry-budget`).
        proto.with_read_budget(opts.interval),
        opts.cap,
        opts.interval,
        tx.clone(),
        ctrl_rx,
    ));
    spawn_ticker(tx.clone(), proto.cluster().clone());

    // Caught before the terminal changes, so no signal can leave it changed.
    let mut signals = StopSignals::install()?;
    let mut stopped_by = None;
    let mut terminal = terminal::init()?;
    spawn_input(tx.clone());
    if let Ok(size) = terminal.size() {
        update::update(&mut app, Event::Resize(size.width, size.height));
    }
    let mut tasks = task::Tasks::new(proto.clone(), tx.clone(), ctrl_tx, opts.expect_total);
    // The terminal went away (closed window: writes fail) while a bulk run
    // goes on: drawing stops, the run is stopped cleanly, then it ends.
    let mut terminal_gone = false;
    let result = async {
        loop {
            if !terminal_gone {
                if let Err(e) = terminal.draw(|f| ui::render(f, &app)) {
                    if app.bulk.is_none() {
                        return Err(e);
                    }
                    tracing::warn!(error = %e, "cannot draw: stopping the bulk run, then quitting");
                    terminal_gone = true;
                    // As a closed terminal's SIGHUP would end it.
                    stopped_by.get_or_insert(StopSignal::Hangup);
                    for io in update::update(&mut app, Event::Signal(StopSignal::Hangup)) {
                        tasks.start(io);
                    }
                }
            }
            app.free_retired();
            let first = tokio::select! {
                ev = rx.recv() => match ev {
                    Some(ev) => ev,
                    None => break,
                },
                signal = signals.recv() => {
                    tracing::info!(signal = signal.name(), "stopping on a signal");
                    // The first names the ending; a bulk run stops cleanly
                    // first (a later signal changes nothing).
                    stopped_by.get_or_insert(signal);
                    Event::Signal(signal)
                }
            };
            let mut requests = update::update(&mut app, first);
            apply_queued(&mut rx, FRAME, |ev| {
                requests.extend(update::update(&mut app, ev));
            });
            for io in requests {
                tasks.start(io);
            }
            if app.exit.quit {
                break;
            }
        }
        Ok::<(), std::io::Error>(())
    }
    .await;
    terminal::restore();
    result.map(|()| match (stopped_by, app.exit.ending) {
        (Some(signal), _) => Ended::Signal(signal),
        (None, app::Ending::RunStopped) => Ended::RunStopped,
        (None, app::Ending::Quit) => Ended::Quit,
    })
}

/// Applies the events already queued on `rx` before the screen is drawn
/// again, for at most `frame`: a fast bulk run's steps arrive as quickly
/// as they are applied, and must not keep the screen (its bar, the stop
/// question) from being drawn until the run ends.
fn apply_queued<T>(rx: &mut mpsc::UnboundedReceiver<T>, frame: Duration, mut apply: impl FnMut(T)) {
    let frame_ends = Instant::now() + frame;
    while Instant::now() < frame_ends {
        let Ok(ev) = rx.try_recv() else { return };
        apply(ev);
    }
}

/// Ticks once a second with the cluster's time, so ages on screen are
/// measured on the clock the documents were stamped with.
fn spawn_ticker(tx: mpsc::UnboundedSender<Event>, cluster: crate::cluster::Cluster) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tick.tick().await;
            if tx.send(Event::Tick(cluster.now())).is_err() {
                return;
            }
        }
    });
}

fn spawn_input(tx: mpsc::UnboundedSender<Event>) {
    tokio::spawn(async move {
        let mut stream = EventStream::new();
        while let Some(ev) = stream.next().await {
            let ev = match ev {
                Ok(TermEvent::Key(k)) => Event::Key(k),
                Ok(TermEvent::Mouse(m)) => Event::Mouse(m),
                Ok(TermEvent::Resize(w, h)) => Event::Resize(w, h),
                Ok(_) => continue,
                Err(e) => {
                    tracing::error!(error = %e, "terminal input failed");
                    return;
                }
            };
            if tx.send(ev).is_err() {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events that keep coming faster than they are applied leave the
    /// rest queued once the frame is up: the screen is drawn between.
    #[test]
    fn queued_events_wait_for_the_next_frame_once_one_is_up() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        for i in 0..1000 {
            tx.send(i).unwrap();
        }
        let mut applied = 0;
        // Each event takes a millisecond to apply: all of them, a second.
        apply_queued(&mut rx, Duration::from_millis(10), |_| {
            applied += 1;
            std::thread::sleep(Duration::from_millis(1));
        });
        assert!(applied > 0, "the first ones are applied");
        assert!(!rx.is_empty(), "{applied} applied: the rest wait");
    }

    /// With nothing more queued it returns at once, every event applied.
    #[test]
    fn every_queued_event_is_applied_when_they_fit_in_a_frame() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        for i in 0..3 {
            tx.send(i).unwrap();
        }
        let mut applied = Vec::new();
        apply_queued(&mut rx, Duration::from_secs(60), |ev| applied.push(ev));
        assert_eq!(applied, [0, 1, 2]);
    }
}
