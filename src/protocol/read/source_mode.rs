//! Whether an index gives back each document exactly as it was written.
//!
//! Every protocol step sends only the fields it sets, as a partial `_update`;
//! but the product applies it by reading the stored `_source`, merging the
//! fields in and indexing the whole result again (Elasticsearch
//! `UpdateHelper.prepareUpdateIndexRequest`; OpenSearch the same). So every
//! step still rewrites the whole document, on the server, from its stored
//! `_source` — only safe when the stored `_source` *is* the document. Four
//! features make it not so, and the tool then refuses to write into the
//! index (before step 1, with this reason; `doctor` and the dashboard's
//! header say so). No step escapes it: each one writes, and every write is
//! such a server-side rewrite.
//!
//! - `_source.enabled: false`: nothing is stored, a GET returns no source
//!   ("the update, update_by_query and reindex APIs" are not supported:
//!   <https://www.elastic.co/guide/en/elasticsearch/reference/7.17/mapping-source-field.html>,
//!   <https://docs.opensearch.org/docs/latest/field-types/metadata-fields/source/>).
//! - `_source.includes`/`excludes`: the stored source is pruned "after the
//!   document has been indexed, but before the `_source` field is stored"
//!   (same pages); the pruned fields are still indexed, and a rewrite from
//!   the stored source deletes them for good.
//! - Synthetic source (Elasticsearch 8.x/9.x): `_source.mode: synthetic` in
//!   the mapping (8.4–8.x), the index setting `index.mapping.source.mode:
//!   synthetic` (8.17+), or an index mode that defaults to it (`logsdb`,
//!   `time_series`). The source is rebuilt from doc values: arrays sorted and
//!   deduplicated, numbers in the mapped precision, field order changed
//!   (<https://www.elastic.co/docs/reference/elasticsearch/mapping-reference/mapping-source-field>),
//!   so a rewrite changes what the application stored.
//! - Derived source (OpenSearch 3.2+): the index setting
//!   `index.derived_source.enabled: true`. "`_source` is reconstructed
//!   dynamically when needed, for example during search, get, mget, reindex,
//!   or update" and "may differ in format or precision from the original
//!   ingested document" (documentation-website
//!   `_mappings/metadata-fields/source.md`; arrays come back sorted and
//!   deduplicated, opensearch-project/OpenSearch#22200), so an update
//!   rewrites the reconstruction.

use super::string_array::string_array;
use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// Where synthetic source was switched on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "by", content = "value", rename_all = "snake_case")]
pub enum SyntheticBy {
    /// `_source.mode: synthetic` in the mapping.
    Mapping,
    /// The index setting `index.mapping.source.mode: synthetic`.
    Setting,
    /// An `index.mode` (`logsdb`, `time_series`) whose default is synthetic.
    IndexMode(String),
}

/// Why an index's stored `_source` is not the document as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "loss", rename_all = "snake_case")]
pub enum SourceLoss {
    /// `_source.enabled: false`.
    Disabled,
    /// `_source.includes` / `_source.excludes`.
    Filtered {
        /// The `includes` patterns (empty: all).
        includes: Vec<String>,
        /// The `excludes` patterns.
        excludes: Vec<String>,
    },
    /// Synthetic source.
    Synthetic(SyntheticBy),
    /// OpenSearch derived source (`index.derived_source.enabled: true`).
    Derived,
}

impl SourceLoss {
    /// Reads one concrete index's mapping (its `mappings` object) and its
    /// settings answer (`{"settings": …, "defaults": …}`).
    pub fn of(mapping: Option<&Value>, settings: Option<&Value>) -> Option<SourceLoss> {
        let source = mapping.and_then(|m| m.get("_source"));
        if source
            .and_then(|s| s.get("enabled"))
            .and_then(Value::as_bool)
            == Some(false)
        {
            return Some(SourceLoss::Disabled);
        }
        let patterns = |key: &str| string_array(source.and_then(|s| s.get(key)));
        let (includes, excludes) = (patterns("includes"), patterns("excludes"));
        if !includes.is_empty() || !excludes.is_empty() {
            return Some(SourceLoss::Filtered { includes, excludes });
        }
        if source.and_then(|s| s.get("mode")).and_then(Value::as_str) == Some("synthetic") {
            return Some(SourceLoss::Synthetic(SyntheticBy::Mapping));
        }
        let settings = settings?;
        if derived_by_settings(settings) {
            return Some(SourceLoss::Derived);
        }
        synthetic_by_settings(settings)
    }

    /// The refusal, naming the index and the mapping feature.
    pub fn problem(&self, index: &str) -> String {
        format!(
            "`{index}` {self}: every protocol step's update is applied by rewriting the whole \
             document from its stored `_source`, which would destroy the application's data; \
             the tool does not write \
             there (store `_source` in full, or point the tool at an index that does)"
        )
    }
}

impl fmt::Display for SourceLoss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceLoss::Disabled => f.write_str(
                "does not store `_source` (`_source.enabled: false`): documents cannot be read back",
            ),
            SourceLoss::Filtered { includes, excludes } => write!(
                f,
                "stores a pruned `_source` (`_source.includes: {includes:?}`, \
                 `_source.excludes: {excludes:?}`): a rewrite deletes the pruned fields"
            ),
            SourceLoss::Synthetic(by) => {
                let how = match by {
                    SyntheticBy::Mapping => "`_source.mode: synthetic`".to_string(),
                    SyntheticBy::Setting => "`index.mapping.source.mode: synthetic`".to_string(),
                    SyntheticBy::IndexMode(m) => format!("`index.mode: {m}`"),
                };
                write!(
                    f,
                    "has synthetic `_source` ({how}): documents are rebuilt from doc values \
                     (arrays sorted and deduplicated, numbers in the mapped precision)"
                )
            }
            SourceLoss::Derived => f.write_str(
                "has derived `_source` (`index.derived_source.enabled: true`): documents are \
                 reconstructed from the index (arrays sorted and deduplicated, values in the \
                 mapped format)",
            ),
        }
    }
}

/// Whether OpenSearch's derived source is on (`index.derived_source.enabled`,
/// flat or nested, a string or a boolean, set or defaulted).
fn derived_by_settings(settings: &Value) -> bool {
    ["settings", "defaults"].iter().any(|k| {
        settings.get(*k).is_some_and(|group| {
            let v = group
                .pointer("/index/derived_source/enabled")
                .or_else(|| group.get("index.derived_source.enabled"));
            matches!(v, Some(Value::Bool(true))) || v.and_then(Value::as_str) == Some("true")
        })
    })
}

/// Synthetic source from the settings (explicit or default), or implied by
/// an index mode whose default it is.
fn synthetic_by_settings(settings: &Value) -> Option<SourceLoss> {
    let setting = |flat: &str, nested: &str| {
        ["settings", "defaults"].iter().find_map(|k| {
            let group = settings.get(*k)?;
            group
                .pointer(nested)
                .or_else(|| group.get(flat))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
    };
    let mode = setting("index.mapping.source.mode", "/index/mapping/source/mode");
    match mode.as_deref() {
        Some("synthetic") => Some(SourceLoss::Synthetic(SyntheticBy::Setting)),
        Some(_) => None,
        None => setting("index.mode", "/index/mode")
            .filter(|m| m == "logsdb" || m == "time_series")
            .map(|m| SourceLoss::Synthetic(SyntheticBy::IndexMode(m))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(mapping: Value, settings: Value) -> Option<SourceLoss> {
        SourceLoss::of(Some(&mapping), Some(&settings))
    }

    #[test]
    fn a_stored_source_is_whole() {
        assert_eq!(of(json!({"properties": {}}), json!({"settings": {}})), None);
        assert_eq!(
            of(
                json!({"_source": {"enabled": true, "mode": "stored"}}),
                json!({"defaults": {"index": {"mapping": {"source": {"mode": "stored"}}}}})
            ),
            None
        );
        // An explicit stored mode wins over the index mode's default.
        assert_eq!(
            of(
                json!({}),
                json!({"settings": {"index.mode": "logsdb", "index.mapping.source.mode": "stored"}})
            ),
            None
        );
    }

    #[test]
    fn every_lossy_source_is_named() {
        assert_eq!(
            of(json!({"_source": {"enabled": false}}), json!({})),
            Some(SourceLoss::Disabled)
        );
        assert_eq!(
            of(json!({"_source": {"excludes": ["secret"]}}), json!({})),
            Some(SourceLoss::Filtered {
                includes: vec![],
                excludes: vec!["secret".into()]
            })
        );
        assert_eq!(
            of(json!({"_source": {"mode": "synthetic"}}), json!({})),
            Some(SourceLoss::Synthetic(SyntheticBy::Mapping))
        );
        assert_eq!(
            of(
                json!({}),
                json!({"settings": {"index": {"mapping": {"source": {"mode": "synthetic"}}}}})
            ),
            Some(SourceLoss::Synthetic(SyntheticBy::Setting))
        );
        assert_eq!(
            of(
                json!({}),
                json!({"settings": {"index": {"mode": "logsdb"}}})
            ),
            Some(SourceLoss::Synthetic(SyntheticBy::IndexMode(
                "logsdb".into()
            )))
        );
        assert_eq!(
            of(
                json!({}),
                json!({"settings": {"index": {"derived_source": {"enabled": "true"}}}})
            ),
            Some(SourceLoss::Derived)
        );
        assert_eq!(
            of(
                json!({}),
                json!({"settings": {"index.derived_source.enabled": true}})
            ),
            Some(SourceLoss::Derived)
        );
        assert_eq!(
            of(
                json!({}),
                json!({"defaults": {"index": {"derived_source": {"enabled": "false"}}}})
            ),
            None
        );
        let why = SourceLoss::Disabled.problem("accounts");
        assert!(why.contains("`accounts`") && why.contains("_source.enabled: false"));
    }
}
