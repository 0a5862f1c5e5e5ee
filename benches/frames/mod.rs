//! Frame timing shared by the dashboard and incident benches: one
//! dashboard state at 160×48 fed a polled snapshot, then timed three ways
//! (after a poll, at a tick, at a key `j`), each frame as the event loop
//! runs it (`update`, then drawing into a `TestBackend`; the snapshot a
//! poll replaced is freed after drawing, untimed, as the loop frees it after
//! the frame). Nothing asserts
//! on time; the medians go to BENCHMARKS.md.

use chrono::{Duration as ChronoDuration, Utc};
use estx::dashboard::app::{App, Settings};
use estx::dashboard::event::Event;
use estx::dashboard::{ui, update::update};
use estx::protocol::read::poll::Snapshot;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use std::time::{Duration, Instant};

/// Frames timed per kind: 201, or `ESTX_BENCH_FRAMES` (more, to profile
/// drawing with `perf`: the frames then outweigh the seeding).
fn frames() -> usize {
    std::env::var("ESTX_BENCH_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(201)
}

/// The median of `v`.
pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Times frames of a dashboard at 160×48 showing `snap` (polled from `url`,
/// its transactions in `transactions_index`) and prints their medians:
/// after a poll (the snapshot moved in as from the poller, a tick, the view
/// derived, drawn: apply and render apart), a tick alone (the data
/// unchanged: drawing only reads the view), and a key `j` (the selection
/// moves: the view derived again).
pub fn measure(snap: &Snapshot, url: &str, transactions_index: &str) {
    let n = frames();
    let settings = Settings {
        url: url.to_string(),
        recovery_window: Duration::from_secs(120),
        investigate_after: Duration::from_secs(3600),
        read_only: false,
        transactions_index: transactions_index.to_string(),
        profile: None,
        mark: None,
        runbooks: Default::default(),
        others_unavailable: None,
    };
    let now = Utc::now();
    let at = |i: usize| now + ChronoDuration::seconds(i as i64);
    let mut app = App::new(settings, Duration::from_secs(2), now);
    app.terminal.size = (160, 48);
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    let mut draw = |app: &App| terminal.draw(|f| ui::render(f, app)).map(|_| ());
    // The snapshot arrives by move, as from the poller: copies made first.
    let mut copies: Vec<_> = (0..n).map(|_| Box::new(snap.clone())).collect();
    let (mut applied, mut drawn) = (Vec::new(), Vec::new());
    for i in 0..n {
        let copy = copies.pop().expect("a copy");
        let started = Instant::now();
        update(&mut app, Event::Polled(Ok(copy)));
        update(&mut app, Event::Tick(at(i)));
        let between = Instant::now();
        draw(&app).expect("draw");
        applied.push(between - started);
        drawn.push(between.elapsed());
        app.free_retired(); // after the frame, as the event loop does
    }
    let total: Vec<Duration> = applied.iter().zip(&drawn).map(|(a, d)| *a + *d).collect();
    println!(
        "frame after a poll (apply the snapshot, derive, render 160x48): median {:.2?} \
         (apply + derive {:.2?}, render {:.2?}) over {n}",
        median(total),
        median(applied),
        median(drawn)
    );
    let times = time(n, |i| {
        update(&mut app, Event::Tick(at(i)));
        draw(&app).expect("draw");
    });
    println!("frame (tick + render 160x48): median {times:.2?} over {n}");
    let down = Event::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('j'),
        crossterm::event::KeyModifiers::NONE,
    ));
    let times = time(n, |_| {
        update(&mut app, down.clone());
        draw(&app).expect("draw");
    });
    println!("frame (key j: re-derive + render 160x48): median {times:.2?} over {n}");
}

/// The median time of `n` runs of `frame` (given the run's number).
fn time(n: usize, mut frame: impl FnMut(usize)) -> Duration {
    let times = (0..n)
        .map(|i| {
            let started = Instant::now();
            frame(i);
            started.elapsed()
        })
        .collect();
    median(times)
}
