//! Export of the transaction table as filtered and sorted on screen: one CSV
//! row per transaction with full ids and every column of the CLI's `list`
//! rows (the protocol's [`TransactionRow`] and its one CSV writer), each stamped with
//! the as-of time of the snapshot it came from. Written off the UI loop to
//! the state directory `estx-tui paths` shows (`$XDG_STATE_HOME/estx-tui`,
//! else `~/.local/state/estx-tui`; created private to the user, as the data
//! names accounts and amounts), never the current directory, under a name
//! with the time in it (never over another file); the path goes to the
//! dashboard's log pane and the log file.

use super::event::Event;
use crate::local_files::{private_dir, state_dir_from_env};
use crate::protocol::rows::{to_csv, TransactionRow};
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

/// Writes the export off the UI loop and reports where (or why not).
pub fn spawn(rows: Vec<TransactionRow>, as_of: DateTime<Utc>, events: UnboundedSender<Event>) {
    tokio::task::spawn_blocking(move || {
        let result = write(&rows, as_of).map(|path| (path.display().to_string(), rows.len()));
        let _ = events.send(Event::Exported(result));
    });
}

fn write(rows: &[TransactionRow], as_of: DateTime<Utc>) -> Result<PathBuf, String> {
    let dir = export_dir()?;
    private_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(file_name(as_of));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    file.write_all(to_csv(rows, as_of).as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    tracing::info!(path = %path.display(), rows = rows.len(), "exported the transaction table");
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let csv = to_csv(&[row], as_of);
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
