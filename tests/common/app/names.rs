//! Every field name and state value the application writes, in one place,
//! so that a variant with other conventions (camelCase fields, `PENDING`
//! states) is one more constant.

/// A transaction's state, as the article names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum State {
    Created,
    Pending,
    Committed,
    Finished,
    Terminating,
    RolledBack,
}

impl State {
    /// Every state, in the order of the article's table.
    pub const ALL: [State; 6] = [
        State::Created,
        State::Pending,
        State::Committed,
        State::Finished,
        State::Terminating,
        State::RolledBack,
    ];

    /// The states the article's recovery query looks for.
    pub const IN_FLIGHT: [State; 4] = [
        State::Created,
        State::Pending,
        State::Terminating,
        State::Committed,
    ];
}

/// The names of an application's fields and state values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Names {
    // transactions
    pub state: &'static str,
    pub src: &'static str,
    pub dest: &'static str,
    pub amount: &'static str,
    pub creation_time: &'static str,
    pub modification_time: &'static str,
    /// The state values, in the order of [`State::ALL`].
    pub states: [&'static str; 6],
    /// The names the transactions index's mapping gives the two accounts
    /// (the article maps `src_account`/`dest_account` while its documents
    /// carry `src_acct`/`dest_acct`; others map what they write).
    pub mapped_accounts: [&'static str; 2],
    // accounts
    pub balance: &'static str,
    pub pending: &'static str,
    // Kestra's locks: `{category, id, owner, createdAt}`
    pub lock_category: &'static str,
    pub lock_id: &'static str,
    pub lock_owner: &'static str,
    pub lock_created: &'static str,
    // the application's heartbeats: one document per instance
    pub instance: &'static str,
    pub heartbeat: &'static str,
}

impl Names {
    /// The value written for `state`.
    pub fn state_value(&self, state: State) -> &'static str {
        self.states[State::ALL.iter().position(|s| *s == state).unwrap_or(0)]
    }

    /// Each field the tool's schema map names: (the tool's key, which is
    /// the article's name, this application's name).
    fn mapped_fields(&self) -> [(&'static str, &'static str); 10] {
        [
            ("transaction_state", self.state),
            ("src_acct", self.src),
            ("dest_acct", self.dest),
            ("amount", self.amount),
            ("creation_time", self.creation_time),
            ("modification_time", self.modification_time),
            ("balance", self.balance),
            ("pending_transactions", self.pending),
            ("owner", self.lock_owner),
            ("created_at", self.lock_created),
        ]
    }

    /// The article's name of every field this application names otherwise
    /// (what the tool must never write into its documents).
    pub fn article_names_unused(&self) -> Vec<&'static str> {
        self.mapped_fields()
            .into_iter()
            .filter(|(article, own)| article != own)
            .map(|(article, _)| article)
            .collect()
    }

    /// The tool's `[profiles.PROFILE.schema]` map for these names.
    pub fn schema_toml(&self, profile: &str) -> String {
        let mut out = format!("[profiles.{profile}.schema]\n");
        for (article, own) in self.mapped_fields() {
            out.push_str(&format!("{article} = \"{own}\"\n"));
        }
        out.push_str(&format!("[profiles.{profile}.schema.states]\n"));
        for state in State::ALL {
            let (article, own) = (ARTICLE.state_value(state), self.state_value(state));
            out.push_str(&format!("\"{article}\" = \"{own}\"\n"));
        }
        out
    }

    /// The state a written value names, if any.
    pub fn parse_state(&self, value: &str) -> Option<State> {
        State::ALL
            .into_iter()
            .find(|s| self.state_value(*s) == value)
    }
}

/// The article's names (snake_case, lowercase states), Kestra's lock fields
/// and a Kestra-like heartbeat (`id`, `heartbeatDate`).
pub const ARTICLE: Names = Names {
    state: "transaction_state",
    src: "src_acct",
    dest: "dest_acct",
    amount: "amount",
    creation_time: "creation_time",
    modification_time: "modification_time",
    states: [
        "created",
        "pending",
        "committed",
        "finished",
        "terminating",
        "rolled-back",
    ],
    mapped_accounts: ["src_account", "dest_account"],
    balance: "balance",
    pending: "pending_transactions",
    lock_category: "category",
    lock_id: "id",
    lock_owner: "owner",
    lock_created: "createdAt",
    instance: "id",
    heartbeat: "heartbeatDate",
};

/// A Java or C# application's names: camelCase fields (`srcAcct`,
/// `dstAcct`, `pendingTransactions`), upper-case states (`PENDING`,
/// `ROLLED_BACK`), its mapping naming what it writes; Kestra's locks and
/// heartbeats keep their own (already camelCase) names.
pub const JAVA: Names = Names {
    state: "transactionState",
    src: "srcAcct",
    dest: "dstAcct",
    amount: "amount",
    creation_time: "creationTime",
    modification_time: "modificationTime",
    states: [
        "CREATED",
        "PENDING",
        "COMMITTED",
        "FINISHED",
        "TERMINATING",
        "ROLLED_BACK",
    ],
    mapped_accounts: ["srcAcct", "dstAcct"],
    balance: "balance",
    pending: "pendingTransactions",
    lock_category: "category",
    lock_id: "id",
    lock_owner: "owner",
    lock_created: "createdAt",
    instance: "id",
    heartbeat: "heartbeatDate",
};
