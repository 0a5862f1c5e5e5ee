//! What the commands print, as leaves that import nothing of the commands:
//! lines on stdout and messages on stderr ([`mod@print`]), aligned tables
//! ([`table`]), the transaction list's JSON/NDJSON/CSV writer ([`list`]),
//! the outcome rows of the acts ([`outcome`], [`bulk`]) and the locks table
//! ([`locks`]).

pub mod bulk;
pub mod list;
pub mod locks;
pub mod outcome;
pub mod print;
pub mod table;

pub use print::{err, fail, out, plural, print_json, PROGRAM};
pub use table::{cell, problems_cell, Table};
