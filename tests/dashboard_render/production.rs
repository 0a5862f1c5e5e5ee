//! A production profile's screen: a thick red frame around everything with
//! `PRODUCTION` on its edges (the profile still named in the header at 80
//! columns), and the typed confirmation its forced and bulk runs ask for.

use crate::drawing::{draw, find, is_red, text};
use crate::fixtures::{app, open_dialog, recover};
use estx::dashboard::app::{App, MarkColour, ProfileMark, RunChoice};
use ratatui::style::Color;

fn production(mut a: App) -> App {
    a.settings.profile = Some("prod-eu".into());
    a.settings.mark = Some(ProfileMark {
        label: "PRODUCTION".into(),
        colour: MarkColour::Danger,
        production: true,
    });
    a
}

#[test]
fn a_production_profile_frames_the_screen_in_red() {
    for (w, h) in [(80, 24), (160, 48)] {
        let buf = draw(&production(app()), w, h);
        assert_snapshot!(format!("production_frame_{w}x{h}"), text(&buf));
        // The four corners and both edges are the frame, in red.
        for (x, y) in [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1), (0, h / 2)] {
            assert!(is_red(buf[(x, y)].fg), "({x},{y}) {:?}", buf[(x, y)]);
        }
        assert_eq!(buf[(0, 0)].symbol(), "┏");
        // The label sits on the top and bottom edges, in the theme's alert
        // colours on red.
        let (lx, ly) = find(&buf, " PRODUCTION ").unwrap();
        assert_eq!(ly, 0);
        let on_alert = estx::dashboard::app::Theme::default().on_alert;
        assert!(is_red(buf[(lx + 1, ly)].bg) && buf[(lx + 1, ly)].fg == on_alert);
        let bottom = (0..w).any(|x| buf[(x, h - 1)].symbol() == "P");
        assert!(bottom, "label on the bottom edge");
        // The header is inside it, the profile named.
        let (px, py) = find(&buf, "[prod-eu]").unwrap();
        assert_eq!((py, px > 0), (1, true));
    }
}

#[test]
fn a_profiles_own_label_and_colour_frame_the_screen() {
    let mut a = app();
    a.settings.profile = Some("staging".into());
    a.settings.mark = Some(ProfileMark {
        label: "staging eu".into(),
        colour: MarkColour::Named(Color::Blue),
        production: false,
    });
    let buf = draw(&a, 100, 30);
    assert_eq!(buf[(0, 0)].fg, Color::Blue);
    let (lx, _) = find(&buf, " staging eu ").unwrap();
    assert_eq!(buf[(lx, 0)].bg, Color::Blue);
    // No profile frame: the header starts at the top-left corner.
    assert!(find(&draw(&app(), 100, 30), " estx-tui ").is_some_and(|p| p == (0, 0)));
}

#[test]
fn a_forced_run_on_production_asks_for_the_profile_typed() {
    let mut a = production(app());
    open_dialog(&mut a, recover, "t-pend-1", true);
    let d = a.overlays.dialog_mut().unwrap();
    d.reason_for = Some(RunChoice::Forced);
    d.reason = "INC-7".into();
    d.typed = Some("pro".into());
    d.scroll = usize::MAX;
    let buf = draw(&a, 100, 30);
    assert_snapshot!("production_typed_confirmation_100x30", text(&buf));
    let (x, y) = find(
        &buf,
        " PRODUCTION  profile `prod-eu`: to run, type `prod-eu` (the profile)",
    )
    .unwrap();
    assert!(is_red(buf[(x, y)].bg));
    assert!(find(&buf, "confirm: pro▏").is_some());
}

#[test]
fn the_jobs_view_lists_unfinished_jobs_with_their_operators_and_lives() {
    use estx::dashboard::app::{Dialog, RunChoice};
    use estx::dashboard::layers::dialog::Resume;
    use estx::dashboard::layers::jobs::JobsView;
    let mut a = app();
    let job = crate::fixtures::job;
    let mut jobs = JobsView {
        list: estx::dashboard::load::Load::Loaded(vec![
            job(
                "20260301T114000.000Z-recover-1a2b3c4d",
                20,
                "ops-ann",
                Some(6),
            ),
            job(
                "20260301T110000.000Z-recover-5e6f7a8b",
                60,
                "ops-bob",
                Some(1140),
            ),
            job("20260301T100000.000Z-recover-9c0d1e2f", 120, "ops-cy", None),
        ]),
        ..Default::default()
    };
    jobs.judge(a.now);
    a.overlays
        .open(estx::dashboard::layers::Overlay::Jobs(jobs));
    let buf = draw(&a, 100, 30);
    let s = text(&buf);
    assert!(
        s.contains("jobs: 3 unfinished bulk run(s) · 1 live · 1 presumed dead · 1 unknown"),
        "{s}"
    );
    assert!(s.contains("by ops-bob (cluster user) on bastion"), "{s}");
    assert!(s.contains("live, beat 6s ago · 20260301T114000"), "{s}");
    assert!(
        s.contains("presumed dead, silent 19m00s · 20260301T110000"),
        "{s}"
    );
    assert!(s.contains("unknown, no heartbeat · 20260301T100000"), "{s}");
    // Each life in its colour: live healthy, presumed dead a warning.
    let at = |needle: &str| {
        let (x, y) = find(&buf, needle).unwrap_or_else(|| panic!("{needle}: {s}"));
        buf[(x, y)].fg
    };
    assert_eq!(at("live, beat"), a.theme.good);
    assert_eq!(at("presumed dead, silent"), a.theme.warn);
    assert_eq!(at("unknown, no"), a.theme.odd);
    assert_snapshot!("jobs_view_lives_100x30", s);
    assert!(
        s.contains("j/k select · Enter resume · r read again · Esc close"),
        "{s}"
    );
    // The keys as the config rebinds them.
    let refresh = estx::dashboard::keymap::KeyOverride {
        action: "refresh".into(),
        keys: vec!["F5".into()],
        line: 1,
    };
    a.keys = estx::dashboard::keymap::Keymap::with_overrides(&[refresh], &[]).unwrap();
    let s = text(&draw(&a, 100, 30));
    assert!(
        s.contains("j/k select · Enter resume · F5 read again · Esc close"),
        "{s}"
    );
    a.keys = Default::default();
    // Enter on the live job: the confirmation dialog every act uses, where
    // only the force key acts, with a reason.
    let (run, resume) = {
        let j = a.overlays.get::<JobsView>().unwrap();
        let r = &j.list.value().unwrap()[0];
        let resume = Resume {
            run: r.record_id.clone(),
            procedure: estx::protocol::Procedure::Recover,
            total: r.transactions.len(),
            life: j.rows[0].life,
        };
        (r.record_id.clone(), resume)
    };
    let _ = run;
    let mut dialog = Dialog::resume(resume);
    dialog.reason_for = Some(RunChoice::Forced);
    dialog.reason = "bastion-2 rebo".into();
    a.overlays.open_dialog(dialog.clone());
    let s = text(&draw(&production(a.clone()), 100, 30));
    assert!(s.contains("Resume job 20260301T114000"), "{s}");
    assert!(s.contains("y is refused: job 20260301T114000"), "{s}");
    assert!(
        s.contains("a resume would run its transactions a second time"),
        "{s}"
    );
    assert!(
        s.contains("required, recorded in the audit trail): bastion-2 rebo▏"),
        "{s}"
    );
    // Then the profile's name, typed.
    dialog.reason = "bastion-2 rebooted".into();
    dialog.typed = Some("pr".into());
    a.overlays.open_dialog(dialog);
    let s = text(&draw(&production(a), 100, 30));
    assert!(s.contains("to run, type `prod-eu` (the profile)"), "{s}");
    assert!(s.contains("confirm: pr▏"), "{s}");
    assert_snapshot!("jobs_view_resuming_100x30", s);
}

#[test]
fn with_a_file_trail_the_jobs_view_says_other_operators_jobs_are_not_seen() {
    use estx::dashboard::layers::jobs::JobsView;
    use estx::protocol::jobs::OthersUnavailable;
    let mut a = app();
    let open = |a: &mut estx::dashboard::app::App| {
        let mut jobs = JobsView {
            list: estx::dashboard::load::Load::Loaded(vec![]),
            ..Default::default()
        };
        jobs.judge(a.now);
        a.overlays
            .open(estx::dashboard::layers::Overlay::Jobs(jobs));
    };
    open(&mut a);
    let s = text(&draw(&a, 100, 30));
    assert!(!s.contains("other operators"), "{s}");
    // A file trail: one line says the view holds this file's jobs only.
    a.settings.others_unavailable = Some(OthersUnavailable::FileTrail);
    open(&mut a);
    let s = text(&draw(&a, 100, 30));
    assert!(
        s.contains("other operators' jobs are not seen: the audit trail is a local file"),
        "{s}"
    );
    assert!(s.contains("no unfinished bulk run"), "{s}");
}
