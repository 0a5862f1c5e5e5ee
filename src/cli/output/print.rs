//! Writing to the terminal: stdout lines that never panic on a closed pipe,
//! one-line `estx-tui: ...` messages on stderr, pretty JSON.

use crate::error::Error;
use serde_json::Value;
use std::fmt::Display;
use std::io::Write;

/// Prefix of every message on stderr.
pub const PROGRAM: &str = "estx-tui";

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
        // What exists and the likely causes follow the command (`missing`).
        Error::IndexMissing(index) => {
            crate::cli::missing::noted(index);
            err(e)
        }
        _ => err(e),
    }
    crate::cli::exit::of_error(e)
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
