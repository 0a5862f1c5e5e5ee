//! Advice when an index the tool reads does not exist. On a production
//! cluster the likely causes are a wrong cluster (`--url`, the profile), a
//! wrong name (`--transactions-index` and the like, a typo) or a snapshot
//! restore still under way; creating empty indices with `init` is the right
//! first step only on a new cluster. So the advice names what exists (the
//! indices and aliases with a close name), the index options and profile in
//! force, the likely causes, and `init` last.

use crate::cli::output::{err, print};
use crate::protocol::Protocol;

/// Prints the advice for the missing index the command's error named
/// ([`print::fail`] noted it), if any.
pub async fn advise(p: &Protocol, profile: Option<&str>) {
    let Some(missing) = print::missing_index() else {
        return;
    };
    for line in advice(p, &missing, profile).await {
        err(line);
    }
}

/// The advice's lines, most likely cause first and `init` last.
pub async fn advice(p: &Protocol, missing: &str, profile: Option<&str>) -> Vec<String> {
    let ix = &p.config().indices;
    let profile = profile.map_or("no profile".to_string(), |n| format!("profile `{n}`"));
    let mut lines = vec![format!(
        "index `{missing}` does not exist on {}; in force ({profile}): --transactions-index {}, \
         --accounts-index {}, --locks-index {}, --audit-index {}",
        p.cluster().url(),
        ix.transactions,
        ix.accounts,
        ix.locks,
        ix.audit
    )];
    match existing(p).await {
        Ok(names) => {
            let close = close_names(missing, &names);
            if close.is_empty() {
                let shown: Vec<&str> = names
                    .iter()
                    .filter(|n| !n.starts_with('.'))
                    .take(10)
                    .map(String::as_str)
                    .collect();
                lines.push(match shown.is_empty() {
                    true => "no index or alias exists on this cluster (an empty or new cluster, \
                             or one being restored)"
                        .to_string(),
                    false => format!(
                        "no index or alias here has a close name; some that exist: {}",
                        shown.join(", ")
                    ),
                });
            } else {
                lines.push(format!(
                    "indices or aliases here with a close name: {}",
                    close.join(", ")
                ));
            }
        }
        Err(e) => lines.push(format!("cannot list the indices that exist: {e}")),
    }
    lines.push(
        "likely causes: the wrong cluster (--url, ESTX_URL, the profile), a wrong index name \
         (the options above, ESTX_*_INDEX, the profile), or a snapshot restore still under way \
         (GET _cat/recovery?active_only=true)"
            .to_string(),
    );
    lines.push("only on a new cluster: `estx-tui init` creates the indices (empty)".to_string());
    lines
}

/// The names of the indices and aliases that exist.
async fn existing(p: &Protocol) -> crate::error::Result<Vec<String>> {
    let v = p
        .cluster()
        .get_json(
            "/_resolve/index/*,-.*?expand_wildcards=open",
            "resolve index",
        )
        .await?;
    let mut names: Vec<String> = ["indices", "aliases", "data_streams"]
        .iter()
        .flat_map(|k| v[k].as_array().cloned().unwrap_or_default())
        .filter_map(|e| e["name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// The names close to `missing`: one containing the other, or a few edits
/// apart (a typo), closest first.
pub fn close_names(missing: &str, names: &[String]) -> Vec<String> {
    let m = missing.to_lowercase();
    let mut close: Vec<(usize, &String)> = names
        .iter()
        .filter_map(|n| {
            let l = n.to_lowercase();
            let d = edits(&m, &l);
            let near = d <= 1.max(m.len() / 5);
            let contains = m.len() >= 4 && (l.contains(&m) || m.contains(&l)) && l.len() >= 4;
            (near || contains).then_some((d, n))
        })
        .collect();
    close.sort();
    close.into_iter().take(5).map(|(_, n)| n.clone()).collect()
}

/// Levenshtein distance.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::close_names;

    #[test]
    fn close_names_catch_typos_and_prefixes() {
        let names: Vec<String> = [
            "transactions",
            "accounts",
            "locks",
            "prod-transactions",
            "logs",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(close_names("transactons", &names), vec!["transactions"]);
        assert_eq!(close_names("transactions-v2", &names), vec!["transactions"]);
        assert_eq!(
            close_names("transactions", &names),
            vec!["transactions", "prod-transactions"]
        );
        assert_eq!(close_names("lock", &names), vec!["locks"]);
        assert!(close_names("zzzzzzzz", &names).is_empty());
    }
}
