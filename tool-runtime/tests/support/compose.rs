//! The tools of the composition and decision tests (`compose_b*.rs`, `decisions_b3*.rs`): a
//! transfer that always needs approval and records what its handler got, a lookup that needs
//! none, and a ledger of handler runs.
#![allow(dead_code, unreachable_pub)]

use std::sync::{Arc, Mutex};

use tool_runtime::{
    Agent, Context, ConversationModel, ConversationTurn, MemoryLedger, Schema, Tool,
};

/// A transfer of money.
#[derive(Schema, Debug, Clone, serde::Serialize)]
pub struct Transfer {
    /// The account to pay.
    #[schema(pattern = "^[a-z0-9-]+$")]
    pub to: String,
    /// How much, in cents.
    #[schema(min = 1, max = 100000)]
    pub cents: u64,
}

/// What a lookup looks for.
#[derive(Schema, Debug, Clone, serde::Serialize)]
pub struct Lookup {
    /// The account.
    pub account: String,
}

/// What ran: each handler run, as `tool:detail`.
#[derive(Clone, Default)]
pub struct Ledger(pub Arc<Mutex<Vec<String>>>);

impl Ledger {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&self, entry: String) {
        self.0.lock().expect("not poisoned").push(entry);
    }

    pub fn entries(&self) -> Vec<String> {
        self.0.lock().expect("not poisoned").clone()
    }
}

/// `transfer`: every call needs approval; its handler records `transfer:{to}:{cents}`.
pub fn transfer(ledger: &Ledger) -> Tool {
    let ledger = ledger.clone();
    Tool::builder("transfer", "Pays an account.")
        .require_approval()
        .handler(move |_ctx: Context, input: Transfer| {
            let ledger = ledger.clone();
            async move {
                ledger.push(format!("transfer:{}:{}", input.to, input.cents));
                Ok::<_, std::convert::Infallible>(format!(
                    "paid {} cents to {}",
                    input.cents, input.to
                ))
            }
        })
        .build()
}

/// `lookup`: needs no approval; its handler records `lookup:{account}`.
pub fn lookup(ledger: &Ledger) -> Tool {
    let ledger = ledger.clone();
    Tool::builder("lookup", "Reads an account's balance.")
        .handler(move |_ctx: Context, input: Lookup| {
            let ledger = ledger.clone();
            async move {
                ledger.push(format!("lookup:{}", input.account));
                Ok::<_, std::convert::Infallible>(format!("{} holds 1200 cents", input.account))
            }
        })
        .build()
}

// ─── Three levels: a top agent, its manager, the manager's payer ───

/// What the payer's model asks to pay in the three-level runs.
pub const ASKED: &str = r#"{"to":"acme","cents":90000}"#;

/// The three levels' scripts: the top asks the manager, the manager asks the payer, the
/// payer pays with `pay` (the arguments the payer's model sends).
pub fn scripts(pay: &str) -> [ConversationModel; 3] {
    [
        ConversationModel::new([
            ConversationTurn::new().call("t1", "manager", r#"{"request":"settle acme"}"#),
            ConversationTurn::reply("all settled"),
        ]),
        ConversationModel::new([
            ConversationTurn::new().call("m1", "payer", r#"{"request":"pay acme"}"#),
            ConversationTurn::reply("manager: paid acme"),
        ]),
        ConversationModel::new([
            ConversationTurn::new().call("i1", "transfer", pay),
            ConversationTurn::reply("payer: done"),
        ]),
    ]
}

/// The three agents, freshly built; the payer's `transfer` needs approval unless `plain`.
pub fn agents(models: [ConversationModel; 3], ledger: &Ledger, plain: bool) -> Agent {
    let [top, middle, inner] = models;
    let pay = if plain {
        plain_transfer(ledger)
    } else {
        transfer(ledger)
    };
    let payer = Agent::builder(inner).tool(pay).build().expect("builds");
    let manager = Agent::builder(middle)
        .agent_tool(payer.as_tool("payer", "Pays accounts."))
        .build()
        .expect("builds");
    Agent::builder(top)
        .agent_tool(manager.as_tool("manager", "Manages payments."))
        .ledger(MemoryLedger::new())
        .build()
        .expect("builds")
}

/// `transfer` without approval: the straight run's.
pub fn plain_transfer(ledger: &Ledger) -> Tool {
    let ledger = ledger.clone();
    Tool::builder("transfer", "Pays an account.")
        .handler(move |_ctx: Context, input: Transfer| {
            let ledger = ledger.clone();
            async move {
                ledger.push(format!("transfer:{}:{}", input.to, input.cents));
                Ok::<_, std::convert::Infallible>(format!(
                    "paid {} cents to {}",
                    input.cents, input.to
                ))
            }
        })
        .build()
}
