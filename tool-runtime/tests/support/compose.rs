//! The tools of the composition and decision tests (`compose_b*.rs`, `decisions_b3*.rs`): a
//! transfer that always needs approval and records what its handler got, a lookup that needs
//! none, and a ledger of handler runs.
#![allow(dead_code, unreachable_pub)]

use std::sync::{Arc, Mutex};

use tool_runtime::{Context, Schema, Tool};

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
