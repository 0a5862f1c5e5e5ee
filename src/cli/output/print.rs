//! Writing to the terminal: stdout lines that never panic on a closed pipe,
//! one-line `estx-tui: ...` messages on stderr, pretty JSON; and the
//! missing index a failure named, kept for the advice after the command
//! (`cli::missing`, which reads it here: this leaf imports nothing of it).

use crate::error::Error;
use serde_json::Value;
use std::fmt::Display;
use std::io::Write;
use std::sync::Mutex;

/// Prefix of every message on stderr.
pub const PROGRAM: &str = "estx-tui";

/// The missing index a command's error named ([`fail`]), for the advice
/// printed once the command is over (`cli::missing::advise`).
static MISSING: Mutex<Option<String>> = Mutex::new(None);

/// Writes one line to stdout; a closed pipe is ignored, not a panic.
pub fn out(line: impl Display) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// Writes one `estx-tui: <message>` line to stderr.
pub fn err(message: impl Display) {
    let _ = writeln!(std::io::stderr().lock(), "{PROGRAM}: {message}");
}

/// Reports a library error on stderr and returns its exit code (see
/// [`crate::cli::exit::of_error`]).
pub fn fail(e: &Error) -> i32 {
    tracing::warn!(error = %e, "command failed");
    match e {
        Error::Unreachable(_) => err(format_args!(
            "{e} (is --url / ESTX_URL right, and the cluster up?)"
        )),
        // What exists and the likely causes follow the command
        // (`cli::missing`).
        Error::IndexMissing(index) => {
            if let Ok(mut slot) = MISSING.lock() {
                slot.get_or_insert_with(|| index.to_string());
            }
            err(e)
        }
        _ => err(e),
    }
    crate::cli::exit::of_error(e)
}

/// The missing index a failure reported named, if any: taken, so its
/// advice is printed once.
pub fn missing_index() -> Option<String> {
    MISSING.lock().ok().and_then(|mut slot| slot.take())
}

/// Prints a JSON value, pretty, to stdout.
pub fn print_json(v: &Value) {
    match serde_json::to_string_pretty(v) {
        Ok(s) => out(s),
        // Serialising a `Value` cannot fail; print compactly if it ever did.
        Err(_) => out(v),
    }
}

/// `n thing` or `n things`.
pub fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::output::print::plural;

    #[test]
    fn plurals() {
        assert_eq!(plural(1, "lock"), "1 lock");
        assert_eq!(plural(2, "lock"), "2 locks");
    }
}
