//! The run that both builds pause and resume (H8), shared by this crate's binary (serde_json's
//! `preserve_order` on) and tool-runtime/tests/paused_seal_h8_preserve_order.rs (off), so
//! that both hold the same tool: `transfer`, which needs approval, called with arguments
//! whose objects are out of order at every level (their keys sort differently by UTF-8 bytes
//! and by UTF-16 code units, too), with non-ASCII text, a fraction, an exponent and an integer
//! beyond 2^53.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tool_runtime::{
    Agent, BuildError, Context, Decisions, ErrorKind, PausedRun, RunError, ScriptedModel,
    ScriptedTurn, Tool,
};

/// Arguments of any shape (an object root).
pub type Args = BTreeMap<String, Value>;

/// The arguments the model gives `transfer`.
pub const ARGUMENTS: &str = r#"{"zeta":{"y":2.5,"b":[3,{"d":"\u00e9","c":null}],"a":1e2},"amount":12345678901234567890,"\ud83d\ude00":"grin","\ufb33":"dalet","\u20ac":"euro","alpha":"Zo\u00eb a/b"}"#;

/// The model's answer once the call is decided.
pub const ANSWER: &str = "Transferred.";

/// The call's id.
pub const CALL: &str = "t1";

/// Why the scenario did not go as it should.
#[derive(Debug)]
pub enum Failure {
    /// The agent could not be built.
    Build(BuildError),
    /// The run ended without pausing.
    NotPaused,
    /// The run, or its resumption, failed (a refused paused run among others).
    Run(RunError),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Build(e) => write!(f, "the agent could not be built: {e}"),
            Failure::NotPaused => f.write_str("the run ended without pausing"),
            Failure::Run(e) => write!(f, "{e}"),
        }
    }
}

/// The tool `transfer` (it needs approval), and the arguments its handler ran with.
pub fn transfer() -> (Tool, Arc<Mutex<Vec<Args>>>) {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&ran);
    let tool = Tool::builder("transfer", "Moves money between accounts.")
        .handler(move |_ctx: Context, args: Args| {
            if let Ok(mut seen) = seen.lock() {
                seen.push(args);
            }
            async move { Ok::<_, std::io::Error>("moved") }
        })
        .require_approval()
        .build();
    (tool, ran)
}

/// An agent holding `tool`, whose model answers `turns`, sealing with `key` when there is one.
fn agent(tool: Tool, turns: Vec<ScriptedTurn>, key: Option<&[u8]>) -> Result<Agent, Failure> {
    let mut builder = Agent::builder(ScriptedModel::new(turns))
        .instructions("Move money as asked.")
        .tool(tool);
    if let Some(key) = key {
        builder = builder.state_key(key);
    }
    builder.build().map_err(Failure::Build)
}

/// Runs the scenario until it pauses on `transfer`'s call.
pub async fn pause(key: Option<&[u8]>) -> Result<PausedRun, Failure> {
    let (tool, _) = transfer();
    let turn = ScriptedTurn::new()
        .text("Moving it.")
        .call(CALL, "transfer", ARGUMENTS)
        .usage(9, 4);
    let agent = agent(tool, vec![turn], key)?;
    match agent.run(&Context::new(), "Move it to Zoë.").await {
        Ok(_) => Err(Failure::NotPaused),
        Err(error) if error.kind() == ErrorKind::Paused => {
            error.into_paused().map_err(Failure::Run)
        }
        Err(error) => Err(Failure::Run(error)),
    }
}

/// Resumes `paused` with its call approved, in a fresh agent: the answer and the arguments
/// `transfer` ran with.
pub async fn resume(paused: PausedRun, key: Option<&[u8]>) -> Result<(String, Vec<Args>), Failure> {
    let (tool, ran) = transfer();
    let agent = agent(tool, vec![ScriptedTurn::reply(ANSWER)], key)?;
    let out = agent
        .resume(&Context::new(), paused, Decisions::new().approve(CALL))
        .await
        .map_err(Failure::Run)?;
    let ran = ran.lock().map(|ran| ran.clone()).unwrap_or_default();
    Ok((out.text, ran))
}

/// Whether serde_json keeps an object's members in the order they were read (its
/// `preserve_order` feature), rather than sorted by key.
pub fn preserves_order() -> bool {
    serde_json::from_str::<serde_json::Map<String, Value>>(r#"{"b":1,"a":2}"#)
        .is_ok_and(|map| map.keys().map(String::as_str).eq(["b", "a"]))
}
