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
#[derive(Debug, Clone, Copy)]
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
    balance: "balance",
    pending: "pending_transactions",
    lock_category: "category",
    lock_id: "id",
    lock_owner: "owner",
    lock_created: "createdAt",
    instance: "id",
    heartbeat: "heartbeatDate",
};
