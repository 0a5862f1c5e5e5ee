//! The view by cause (`c`): it asks for the cluster's counts, Enter makes
//! the selected group the table's filter (asked of the cluster at once),
//! and `Esc` on the table closes the group.

use super::*;
use estx::dashboard::layers::OverlayKind;
use estx::protocol::read::{AgeRange, Group, GroupKind, Groups, TableFilter};

fn groups() -> Groups {
    let stuck = TableFilter {
        stuck_only: true,
        ..Default::default()
    };
    Groups {
        stuck: 7,
        groups: vec![
            Group {
                kind: GroupKind::StateAge,
                label: "pending · 1h–6h".into(),
                count: 5,
                cause: None,
                filter: TableFilter {
                    state: Some(TxnState::Pending),
                    age: Some(AgeRange {
                        min: Some(Duration::from_secs(3600)),
                        max: Some(Duration::from_secs(6 * 3600)),
                    }),
                    ..stuck.clone()
                },
            },
            Group {
                kind: GroupKind::Account,
                label: "A".into(),
                count: 7,
                cause: None,
                filter: TableFilter {
                    account: Some("A".into()),
                    ..stuck
                },
            },
        ],
        unavailable: vec![],
    }
}

fn listings(cmds: &[IoRequest]) -> Vec<TableFilter> {
    cmds.iter()
        .filter_map(|c| match c {
            IoRequest::SetListing(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn c_counts_by_cause_and_enter_makes_the_group_the_tables_filter() {
    let mut app = app(false);
    update(&mut app, key('/'));
    update(&mut app, key('z'));
    update(&mut app, code(KeyCode::Enter));
    let cmds = update(&mut app, key('c'));
    assert!(cmds.contains(&IoRequest::LoadGroups), "{cmds:?}");
    update(&mut app, key('c'));
    assert!(!app.overlays.is_open(OverlayKind::Groups), "c closes it");
    assert!(update(&mut app, key('c')).is_empty(), "one count at a time");
    update(&mut app, Event::Grouped(Ok(Box::new(groups()))));
    update(&mut app, key('j'));
    let cmds = update(&mut app, code(KeyCode::Enter));
    let asked = listings(&cmds);
    assert_eq!(asked.len(), 1, "{cmds:?}");
    assert_eq!(asked[0].account.as_deref(), Some("A"));
    assert!(
        asked[0].stuck_only && asked[0].text.is_empty(),
        "the text gave way"
    );
    assert_eq!(app.focus, Pane::Transactions);
    // The loaded rows naming A show at once (all three do) if stuck,
    // before the group's page comes: not t-new (a minute old).
    let ids: Vec<&str> = app.visible().iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, vec!["t-old", "t-mid"]);
    // Esc on the table closes the group: back to every transaction.
    let cmds = update(&mut app, code(KeyCode::Esc));
    assert_eq!(listings(&cmds), vec![TableFilter::default()]);
    assert!(app.query.group.is_none());
}

#[test]
fn a_group_narrows_the_loaded_rows_by_state_and_age_until_its_page_comes() {
    let mut app = app(false);
    update(&mut app, key('c'));
    update(&mut app, Event::Grouped(Ok(Box::new(groups()))));
    update(&mut app, code(KeyCode::Enter));
    let ids: Vec<&str> = app.visible().iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, vec!["t-old"], "pending, 90 minutes old");
    assert_eq!(app.selection.txn.as_deref(), Some("t-old"));
}

/// The groups are judged on the poll on screen when their counts come: a
/// lock holder whose lease ran out reads holder dead (recover) and comes
/// first, before the hot account (investigate); Enter opens it.
#[test]
fn groups_are_judged_on_the_poll_and_the_actionable_come_first() {
    use estx::dashboard::layers::groups::GroupsView;
    use estx::protocol::locks::{LockInfo, LockView};
    use estx::protocol::read::verdict::SafeAct;
    let mut app = app(false);
    let snap = app.snapshot.as_mut().expect("a poll");
    let doc = serde_json::json!({"owner": "t-old", "process_id": "worker-dead",
        "expires_at": "2020-01-01T00:00:00Z"});
    let info = LockInfo::from_source("A", doc.as_object().unwrap());
    let config = estx::protocol::ProtocolConfig::default();
    let owners = Default::default();
    let lock = LockView::judge(info, &owners, &Default::default(), snap.taken_at, &config);
    snap.locks.push(lock);
    update(&mut app, key('c'));
    let mut g = groups();
    g.groups.push(Group {
        kind: GroupKind::Process,
        label: "worker-dead".into(),
        count: 1,
        filter: TableFilter {
            ids: Some(vec!["t-old".into()]),
            stuck_only: true,
            ..Default::default()
        },
        cause: None,
    });
    update(&mut app, Event::Grouped(Ok(Box::new(g))));
    let view = app.overlays.state_mut::<GroupsView>().expect("open");
    let judged: Vec<(&str, &str)> = view
        .counts
        .value()
        .expect("counted")
        .groups
        .iter()
        .map(|g| {
            let act = g
                .cause
                .as_ref()
                .map_or(SafeAct::Investigate, |c| c.safe_act());
            (g.label.as_str(), act.word())
        })
        .collect();
    assert_eq!(
        judged,
        [
            ("worker-dead", "recover"),
            ("pending · 1h–6h", "investigate"),
            ("A", "investigate")
        ]
    );
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert_eq!(
        listings(&cmds)[0].ids.as_deref(),
        Some(&["t-old".to_string()][..])
    );
}
