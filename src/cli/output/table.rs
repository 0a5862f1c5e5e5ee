//! Aligned text tables, and JSON values as their cells.

use serde_json::Value;

/// An aligned text table; the last column is not padded.
#[derive(Debug, Clone, Default)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers.
    pub fn new<I, S>(headers: I) -> Table
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Table {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row (missing cells are blank, extra cells are dropped).
    pub fn row<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut cells: Vec<String> = cells.into_iter().map(Into::into).collect();
        cells.resize(self.headers.len(), String::new());
        self.rows.push(cells);
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as lines, columns separated by two spaces.
    pub fn render(&self) -> Vec<String> {
        let width = |s: &str| s.chars().count();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| width(h)).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(width(cell));
            }
        }
        let line = |cells: &[String]| {
            let last = cells.len().saturating_sub(1);
            let mut s = String::new();
            for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
                if i > 0 {
                    s.push_str("  ");
                }
                s.push_str(cell);
                if i < last {
                    s.extend(std::iter::repeat_n(' ', w.saturating_sub(width(cell))));
                }
            }
            s.trim_end().to_string()
        };
        std::iter::once(line(&self.headers))
            .chain(self.rows.iter().map(|r| line(r)))
            .collect()
    }
}

/// A JSON value as a table cell: strings bare, null as `-`.
pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A list of problems as one cell (`-` when none).
pub fn problems_cell(v: &Value) -> String {
    match v.as_array() {
        Some(items) if !items.is_empty() => items.iter().map(cell).collect::<Vec<_>>().join("; "),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::output::table::{cell, problems_cell, Table};
    use serde_json::json;

    #[test]
    fn columns_align_and_last_is_unpadded() {
        let mut t = Table::new(["ID", "STATE", "NOTE"]);
        t.row(["a", "pending", ""]);
        t.row(["long-id", "x", "y"]);
        assert_eq!(
            t.render(),
            vec![
                "ID       STATE    NOTE",
                "a        pending",
                "long-id  x        y"
            ]
        );
    }

    #[test]
    fn cells() {
        assert_eq!(cell(&json!(null)), "-");
        assert_eq!(cell(&json!("x")), "x");
        assert_eq!(cell(&json!(5)), "5");
        assert_eq!(problems_cell(&json!(["a", "b"])), "a; b");
        assert_eq!(problems_cell(&json!([])), "");
    }
}
