//! A document's packed steps (`super::compact`) as ONE string, the form
//! `st` is stored in: groups split by `#`, a group's transaction and steps
//! by `;`, a step's items by `|`, a receipt `$before,after,term,on,at`;
//! `%`, `#`, `;`, `|` and `$` inside an item as `%25`, `%23`, `%3B`,
//! `%7C`, `%24`. Apart from `compact` (which says why a string) to keep
//! each file to one thing; it knows only the packed arrays, not steps.

use serde_json::Value;

/// What is wrong with a stored `st` (the caller names the document).
type Result<T> = std::result::Result<T, String>;

/// `st` as one string: the packed groups, arrays of strings and of
/// receipts' numbers, written and read back.
pub(super) struct StText;

impl StText {
    const GROUP: char = '#';
    const ITEM: char = ';';
    const FIELD: char = '|';
    const RECEIPT: char = '$';
    const ESCAPE: char = '%';
    /// Each character that separates, with the code it is written as inside
    /// an item.
    const ESCAPED: [(char, &'static str); 5] = [
        (Self::ESCAPE, "%25"),
        (Self::GROUP, "%23"),
        (Self::ITEM, "%3B"),
        (Self::FIELD, "%7C"),
        (Self::RECEIPT, "%24"),
    ];

    /// The packed groups (`[[txn, [item, ...], ...], ...]`) as text.
    pub(super) fn write(groups: &Value) -> String {
        let mut out = String::new();
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            if g > 0 {
                out.push(Self::GROUP);
            }
            for (i, item) in group.as_array().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push(Self::ITEM);
                }
                match item {
                    Value::String(txn) => Self::escaped(&mut out, txn),
                    step => Self::step(&mut out, step),
                }
            }
        }
        out
    }

    /// One packed step (`[label, target, ..., receipt?]`) as text.
    pub(super) fn step(out: &mut String, step: &Value) {
        for (f, field) in step.as_array().into_iter().flatten().enumerate() {
            if f > 0 {
                out.push(Self::FIELD);
            }
            match field {
                Value::String(text) => Self::escaped(out, text),
                Value::Array(numbers) => {
                    out.push(Self::RECEIPT);
                    for (n, number) in numbers.iter().enumerate() {
                        if n > 0 {
                            out.push(',');
                        }
                        out.push_str(&number.to_string());
                    }
                }
                other => Self::escaped(out, &other.to_string()),
            }
        }
    }

    fn escaped(out: &mut String, text: &str) {
        for c in text.chars() {
            match Self::ESCAPED.iter().find(|(e, _)| *e == c) {
                Some((_, code)) => out.push_str(code),
                None => out.push(c),
            }
        }
    }

    fn unescaped(text: &str) -> Result<String> {
        if !text.contains(Self::ESCAPE) {
            return Ok(text.to_string());
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find(Self::ESCAPE) {
            out.push_str(&rest[..at]);
            let code = rest.get(at..at + 3).unwrap_or_default();
            let (c, _) = Self::ESCAPED
                .iter()
                .find(|(_, e)| e.eq_ignore_ascii_case(code))
                .ok_or_else(|| format!("bad escape in `{text}`"))?;
            out.push(*c);
            rest = &rest[at + 3..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The text back into the packed groups [`StText::write`] was given.
    pub(super) fn read(text: &str) -> Result<Value> {
        let mut groups = Vec::new();
        for group in text.split(Self::GROUP) {
            let mut items = group.split(Self::ITEM);
            let txn = Self::unescaped(items.next().unwrap_or_default())?;
            let mut packed = vec![Value::String(txn)];
            for step in items {
                let fields = step
                    .split(Self::FIELD)
                    .map(|f| match f.strip_prefix(Self::RECEIPT) {
                        Some(numbers) => numbers
                            .split(',')
                            .map(|n| n.parse::<i64>().map(Value::from))
                            .collect::<std::result::Result<Vec<_>, _>>()
                            .map(Value::Array)
                            .map_err(|_| format!("bad receipt `{f}`")),
                        None => Self::unescaped(f).map(Value::String),
                    })
                    .collect::<Result<Vec<_>>>()?;
                packed.push(Value::Array(fields));
            }
            groups.push(Value::Array(packed));
        }
        Ok(Value::Array(groups))
    }
}
