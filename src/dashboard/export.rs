//! Export of every transaction matching the table's filter (all its pages,
//! read by the cluster, not only the rows loaded): one CSV
//! row per transaction with full ids and every column of the CLI's `list`
//! rows (the protocol's [`TransactionRow`] and its one CSV writer), each stamped with
//! the as-of time of the snapshot it came from, and its `cause` and
//! `in_job` columns (`protocol::read::RowNotes`). Written off the UI loop to
//! the state directory `estx-tui paths` shows (`$XDG_STATE_HOME/estx-tui`,
//! else `~/.local/state/estx-tui`; created private to the user, as the data
//! names accounts and amounts), never the current directory, under a name
//! with the time in it (never over another file); the path goes to the
//! dashboard's log pane and the log file.

use super::event::Event;
use crate::local_files::{private_dir, state_dir_from_env};
use crate::protocol::read::{row_notes, TableFilter};
use crate::protocol::rows::{CsvWriter, TransactionRow};
use crate::protocol::time::format_timestamp;
use crate::protocol::Protocol;
use chrono::{DateTime, Utc};
use std::io::Write;
use std::path::PathBuf;
use tokio::sync::mpsc::UnboundedSender;

/// Where exports go: the state directory ([`state_dir_from_env`]).
pub fn export_dir() -> Result<PathBuf, String> {
    state_dir_from_env()
        .ok_or_else(|| "no state directory: neither XDG_STATE_HOME nor HOME is set".into())
}

/// The file name of an export as of `as_of`.
pub fn file_name(as_of: DateTime<Utc>) -> String {
    format!(
        "estx-tui-transactions-{}.csv",
        as_of.format("%Y%m%dT%H%M%S%.3fZ")
    )
}

/// Writes the export off the UI loop: every transaction matching `table`
/// (every page, read by the cluster), and reports where (or why not).
pub fn spawn(proto: Protocol, table: TableFilter, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let result = export(&proto, &table).await;
        let _ = events.send(Event::Exported(result));
    });
}

async fn export(proto: &Protocol, table: &TableFilter) -> Result<(String, usize), String> {
    let as_of = proto.now().await;
    let (path, file) = create(as_of)?;
    let config = proto.config();
    // Each row with its cause and the live job holding it, as `list`'s CSV.
    let (notes, unread) = row_notes(proto, as_of).await;
    for u in unread {
        tracing::warn!(error = %u, "export: a column left empty");
    }
    let mut w = CsvWriter::new(std::io::BufWriter::new(file), format_timestamp(as_of));
    let mut failed = None;
    let mut rows = 0;
    let summary = proto
        .scan_table(table, |page| {
            for t in &page {
                let cause = notes.cause(t);
                let beside = notes.beside(&t.id, cause.as_ref());
                if let Err(e) = w.row(&TransactionRow::of(t, as_of, config), beside) {
                    failed = Some(e.to_string());
                    return false;
                }
                rows += 1;
            }
            true
        })
        .await
        .map_err(|e| e.to_string())?;
    let mut out = w.finish().map_err(|e| e.to_string())?;
    out.flush()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if let Some(e) = failed {
        return Err(format!("{}: {e}", path.display()));
    }
    let partial = summary
        .coverage
        .describe()
        .map(|p| format!(" ({p}: rows may be missing)"))
        .unwrap_or_default();
    tracing::info!(path = %path.display(), rows, "exported the table's matches");
    Ok((format!("{}{partial}", path.display()), rows))
}

/// A new private file in the export directory for an export as of `as_of`.
fn create(as_of: DateTime<Utc>) -> Result<(PathBuf, std::fs::File), String> {
    let dir = export_dir()?;
    private_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(file_name(as_of));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    Ok((path, file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::rows::{to_csv, Beside};
    use crate::protocol::{ProtocolConfig, Transaction};
    use chrono::TimeZone;

    #[test]
    fn every_column_full_ids_and_the_as_of_time_quoted_as_csv_wants() {
        let as_of = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
        let t = Transaction::from_source(
            "a-very-long-transaction-id-0123456789abcdef",
            serde_json::json!({"src_acct": "acme, inc", "dest_acct": "b\"q", "amount": 5,
                "transaction_state": "pending", "modification_time": "2026-03-01T10:00:00Z"})
            .as_object()
            .expect("object"),
        );
        let row = TransactionRow::of(&t, as_of, &ProtocolConfig::default());
        let csv = to_csv([(&row, Beside::default())], as_of);
        let mut lines = csv.lines();
        let header = lines.next().expect("header");
        assert!(header.starts_with("as_of,id,state,src_acct,dest_acct,amount,"));
        assert!(header.contains("stuck") && header.contains("problems"));
        let line = lines.next().expect("row");
        assert!(
            line.starts_with(
                "2026-03-01T12:00:00.000Z,a-very-long-transaction-id-0123456789abcdef,pending,\"acme, inc\",\"b\"\"q\",5,"
            ),
            "{line}"
        );
        assert_eq!(
            file_name(as_of),
            "estx-tui-transactions-20260301T120000.000Z.csv"
        );
    }
}
