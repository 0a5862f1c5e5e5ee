//! Discovery: what the three indices really are on this cluster, read on
//! connect instead of assumed. Aliases and data streams are resolved to their
//! concrete indices; each field the tool queries is resolved against the live
//! mapping to the name that can be queried exactly (a `keyword` field, or the
//! `keyword` sub-field of a `text` field an auto-created index has); where no
//! exact field exists the resolution says so and the queries degrade.

pub use super::index_info::{
    IndexInfo, Refresh, ResolvedField, Target, DEFAULT_REFRESH, SERVERLESS_REFRESH,
};
use super::times::TimeFields;
use crate::protocol::schema::{Field, Schema};
use crate::protocol::Indices;
use serde::Serialize;

/// The fields every query is built from, resolved on this cluster.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fields {
    /// `transaction_state`.
    pub state: ResolvedField,
    /// Source account: `src_acct` and/or the article mapping's `src_account`
    /// (every mapped name; the first when neither is mapped).
    pub src: Vec<ResolvedField>,
    /// Destination account, likewise.
    pub dest: Vec<ResolvedField>,
    /// `modification_time` (a `date` where ages can be queried).
    pub modification_time: ResolvedField,
    /// Lock `owner`.
    pub owner: ResolvedField,
    /// Lock `process_id` (the dashboard groups stuck transactions by it).
    #[serde(skip)]
    pub lock_process: ResolvedField,
    /// Lock `created_at` (sort order of the locks pane).
    pub lock_created_at: ResolvedField,
    /// Account `pending_transactions`.
    pub pending: ResolvedField,
    /// The map the names come from (queries name states through it).
    #[serde(skip)]
    pub schema: Schema,
}

impl Fields {
    /// Whether `modification_time` can be compared with `now-…` on the server.
    pub fn ages_queryable(&self) -> bool {
        matches!(
            self.modification_time.mapped_type.as_deref(),
            None | Some("date") | Some("date_nanos")
        )
    }

    /// Every resolved field with the index it belongs to, for reports.
    pub fn all(&self) -> Vec<(&'static str, &ResolvedField)> {
        let mut v = vec![("transactions", &self.state)];
        v.extend(self.src.iter().map(|f| ("transactions", f)));
        v.extend(self.dest.iter().map(|f| ("transactions", f)));
        v.push(("transactions", &self.modification_time));
        v.push(("accounts", &self.pending));
        v.push(("locks", &self.owner));
        v.push(("locks", &self.lock_created_at));
        v
    }
}

/// Everything discovery learnt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Discovery {
    /// The transactions index.
    pub transactions: IndexInfo,
    /// The accounts index.
    pub accounts: IndexInfo,
    /// The locks index.
    pub locks: IndexInfo,
    /// The resolved fields.
    pub fields: Fields,
    /// The format each time field the protocol writes is written in.
    pub times: TimeFields,
}

impl Discovery {
    /// What discovery assumes before it has read anything (and what an
    /// `init`-created cluster resolves to): every field exact under its name.
    pub fn assumed(ix: &Indices, schema: &Schema) -> Discovery {
        let transactions = IndexInfo::assumed(&ix.transactions);
        let accounts = IndexInfo::assumed(&ix.accounts);
        let locks = IndexInfo::assumed(&ix.locks);
        let fields = resolve_fields(schema, &transactions, &accounts, &locks);
        let times = TimeFields::of_mappings(schema, &transactions, &locks);
        Discovery {
            transactions,
            accounts,
            locks,
            fields,
            times,
        }
    }

    /// The three indices in a fixed order.
    pub fn indices(&self) -> [&IndexInfo; 3] {
        [&self.transactions, &self.accounts, &self.locks]
    }

    /// Whether this is final: every index exists and every queried field is
    /// mapped. Until then discovery is repeated (an index auto-created by the
    /// application's first write changes what the fields resolve to).
    pub fn is_settled(&self) -> bool {
        self.indices().iter().all(|i| i.exists())
            && self.fields.state.is_mapped()
            && self.fields.modification_time.is_mapped()
            && self.fields.owner.is_mapped()
            && self.fields.pending.is_mapped()
    }

    /// Short warnings for the dashboard header and `doctor`: aliases id
    /// operations cannot use, fields without an exact form, refresh off.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for i in self.indices() {
            if let Some(p) = i.id_problem() {
                out.push(p);
            }
            if let Some(loss) = &i.source_loss {
                out.push(loss.problem(&i.name));
            }
            if !i.mixed.is_empty() {
                out.push(format!(
                    "`{}` spans indices mapping {} differently: searches fail on some shards",
                    i.name,
                    i.mixed.join(", ")
                ));
            }
            if i.exists() && i.refresh == Refresh::Never {
                out.push(format!(
                    "`{}` has refresh_interval -1: searches never see new writes by themselves",
                    i.name
                ));
            }
        }
        for (_, f) in self.fields.all() {
            if f.is_mapped() && f.exact.is_none() {
                out.push(format!(
                    "`{}` is `{}` with no keyword sub-field: counted by search, slower",
                    f.name,
                    f.mapped_type.as_deref().unwrap_or("?")
                ));
            }
        }
        if !self.fields.ages_queryable() {
            let f = &self.fields.modification_time;
            out.push(format!(
                "`{}` is `{}`, not a date: ages are computed here, not by the cluster",
                f.name,
                f.mapped_type.as_deref().unwrap_or("?")
            ));
        }
        out
    }
}

/// Resolves the queried fields against the three indices' mappings, under
/// the names `schema` gives them.
pub fn resolve_fields(schema: &Schema, t: &IndexInfo, a: &IndexInfo, l: &IndexInfo) -> Fields {
    let either = |field: Field, article_alias: &str| -> Vec<ResolvedField> {
        let name = schema.name(field);
        let mut names = vec![name];
        // The article's mapping spells it `src_account`: both are read.
        if name == field.canonical() {
            names.push(article_alias);
        }
        let mapped: Vec<ResolvedField> = names
            .iter()
            .map(|n| t.resolve(n))
            .filter(ResolvedField::is_mapped)
            .collect();
        if mapped.is_empty() {
            vec![ResolvedField::unmapped(name)]
        } else {
            mapped
        }
    };
    Fields {
        state: t.resolve(schema.name(Field::State)),
        src: either(Field::Source, "src_account"),
        dest: either(Field::Destination, "dest_account"),
        modification_time: t.resolve(schema.name(Field::ModificationTime)),
        owner: l.resolve(schema.name(Field::LockOwner)),
        lock_process: l.resolve(schema.name(Field::LockProcess)),
        lock_created_at: l.resolve(schema.name(Field::LockCreated)),
        pending: a.resolve(schema.name(Field::Pending)),
        schema: schema.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn info(props: Value) -> IndexInfo {
        let mut i = IndexInfo::assumed("t");
        i.properties = props.as_object().cloned().unwrap_or_default();
        i
    }

    #[test]
    fn the_article_mapping_and_foreign_lock_names_need_no_map() {
        let d = |t: Value, l: Value| {
            let mut d =
                Discovery::assumed(&crate::protocol::Indices::default(), &Schema::default());
            d.transactions = info(t);
            d.locks = info(l);
            d.fields = resolve_fields(&Schema::default(), &d.transactions, &d.accounts, &d.locks);
            d
        };
        // The article's mapping (`src_account`) and Kestra's `createdAt`.
        let article = d(
            json!({"src_account": {"type": "keyword"}, "transaction_state": {"type": "keyword"}}),
            json!({"createdAt": {"type": "date"}}),
        );
        assert!(article.schema_problems().is_empty());
        assert_eq!(
            article.proposal(&[]).schema.name(Field::LockCreated),
            "createdAt"
        );
        let java = d(json!({"transactionState": {"type": "keyword"}}), json!({}));
        let problems = java.schema_problems();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("`transactionState`"), "{problems:?}");
    }

    #[test]
    fn article_mapping_prefers_the_names_documents_write() {
        let t = info(json!({"src_account": {"type": "keyword"},
            "src_acct": {"type": "text", "fields": {"keyword": {"type": "keyword"}}}}));
        let f = resolve_fields(&Schema::default(), &t, &info(json!({})), &info(json!({})));
        let names: Vec<&str> = f.src.iter().map(ResolvedField::query_name).collect();
        assert_eq!(names, ["src_acct.keyword", "src_account"]);
        assert_eq!(f.dest[0].name, "dest_acct");
    }
}
