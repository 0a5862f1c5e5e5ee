//! The dashboard: live panes of transactions by state, accounts and locks,
//! with rollback, forced recovery and lock release on the selected
//! transaction — every action through the protocol module.
//!
//! Shape (after gitui/oxker): one event channel fed by the terminal, the
//! poller and action tasks; [`update::update`] changes [`app::App`] and
//! returns commands; [`ui::render`] is a pure function of the state; the
//! loop below turns commands into tasks. The UI never awaits the network.

pub mod actions;
pub mod app;
pub mod audit;
pub mod bulk;
pub mod bulk_run;
pub mod confirm;
pub mod drill;
pub mod event;
pub mod export;
pub mod follow;
pub mod keymap;
pub mod mouse;
pub mod poller;
pub mod reverse;
pub mod reverse_run;
pub mod target;
pub mod terminal;
pub mod ui;
pub mod update;
pub mod view;

use crate::protocol::Protocol;
use crate::signals::{StopSignal, StopSignals};
use app::{App, Settings};
use crossterm::event::{Event as TermEvent, EventStream};
use event::{Command, Event};
use futures::StreamExt;
use poller::PollControl;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

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
    /// The expected sum of balances the background audit checks
    /// (`--expect-total`); `None` skips that check.
    pub expect_total: Option<i64>,
}

/// Runs the dashboard until the operator quits (`Ok(None)`) or a stop signal
/// arrives (`Ok(Some(signal))`: SIGTERM, SIGHUP or SIGINT, see
/// [`crate::signals`]). The terminal is restored on every path out,
/// including errors; panics are covered by the hook in [`terminal::init`].
pub async fn run(proto: Protocol, opts: DashboardOptions) -> std::io::Result<Option<StopSignal>> {
    let config = proto.config().clone();
    let settings = Settings {
        url: proto.cluster().url().to_string(),
        recovery_window: config.recovery_window,
        investigate_after: config.investigate_after,
        read_only: opts.read_only,
        transactions_index: config.indices.transactions.clone(),
        profile: opts.profile.clone(),
    };
    let mut app = App::new(settings, opts.interval, proto.cluster().now());
    let (tx, mut rx) = mpsc::unbounded_channel::<Event>();
    let (ctrl_tx, ctrl_rx) = mpsc::unbounded_channel::<PollControl>();

    tokio::spawn(poller::run(
        proto.clone(),
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
        app.size = (size.width, size.height);
    }
    let mut bulk_stop: Option<Arc<crate::protocol::intervene::Stop>> = None;
    let result = async {
        loop {
            terminal.draw(|f| ui::render(f, &app))?;
            let first = tokio::select! {
                ev = rx.recv() => match ev {
                    Some(ev) => ev,
                    None => break,
                },
                signal = signals.recv() => {
                    tracing::info!(signal = signal.name(), "stopping on a signal");
                    stopped_by = Some(signal);
                    break;
                }
            };
            let mut commands = update::update(&mut app, first);
            // Apply everything already queued before drawing again.
            while let Ok(ev) = rx.try_recv() {
                commands.extend(update::update(&mut app, ev));
            }
            for c in commands {
                match c {
                    Command::PollNow => {
                        let _ = ctrl_tx.send(PollControl::Now);
                    }
                    Command::SetPaused(p) => {
                        let _ = ctrl_tx.send(PollControl::Pause(p));
                    }
                    Command::SetInterval(d) => {
                        let _ = ctrl_tx.send(PollControl::Interval(d));
                    }
                    Command::SetListing(state) => {
                        let _ = ctrl_tx.send(PollControl::Listing(state));
                    }
                    Command::LoadPreview(action, id) => {
                        actions::spawn_preview(proto.clone(), action, id, tx.clone())
                    }
                    Command::LookUp(id) => actions::spawn_lookup(proto.clone(), id, tx.clone()),
                    Command::Run(run) => actions::spawn_action(proto.clone(), run, tx.clone()),
                    Command::Audit => {
                        actions::spawn_audit(proto.clone(), opts.expect_total, tx.clone())
                    }
                    Command::LoadHistory(id) => {
                        actions::spawn_history(proto.clone(), id, tx.clone())
                    }
                    Command::LoadBulkPreview(action, ids) => {
                        bulk_run::spawn_preview(proto.clone(), action, ids, tx.clone())
                    }
                    Command::RunBulk(runs) => {
                        let stop = Arc::new(crate::protocol::intervene::Stop::default());
                        bulk_stop = Some(stop.clone());
                        bulk_run::spawn_run(proto.clone(), runs, stop, tx.clone())
                    }
                    Command::Export(as_of) => {
                        let rows = app
                            .visible()
                            .iter()
                            .map(|t| {
                                crate::protocol::rows::TransactionRow::of(t, as_of, proto.config())
                            })
                            .collect();
                        export::spawn(rows, as_of, tx.clone());
                    }
                    Command::StopBulk => {
                        if let Some(stop) = &bulk_stop {
                            stop.stop("Esc");
                        }
                    }
                }
            }
            if app.should_quit {
                break;
            }
        }
        Ok::<(), std::io::Error>(())
    }
    .await;
    terminal::restore();
    result.map(|()| stopped_by)
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
