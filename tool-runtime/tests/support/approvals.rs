//! The tools and helpers of the approval tests (`approvals_pause.rs`, `approvals_state.rs`,
//! `approvals_resume.rs`): a tool needing no approval (`echo`), one whose predicate asks for
//! production services (`restart`, admins only), a deferred one (`ship`) and one that fails
//! with a secret (`leaky`); runs that pause, and a forger of unkeyed paused runs.
#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tool_runtime::approval::Approval;
use tool_runtime::{
    Agent, Context, ErrorKind, Model, PausedRun, ResumeError, RunError, RunOutput, Schema,
    ScriptedModel, ScriptedTurn, Tool,
};

use super::agent::Args;

/// Which service to restart.
#[derive(Schema, Debug)]
pub struct Restart {
    /// The service.
    #[schema(pattern = "^[a-z0-9-]+$")]
    pub service_id: String,
    /// Whether to drain connections first.
    #[schema(default = true)]
    pub drain: bool,
}

/// What to ship.
#[derive(Schema, Debug)]
pub struct Ship {
    /// The order.
    pub order_id: String,
}

/// Whether the caller is an admin: the policy of `restart`.
#[derive(Debug, Clone, Copy)]
pub struct Admin(pub bool);

/// Something only the application's context holds: it must never reach a paused run.
#[derive(Debug)]
pub struct Secret(pub &'static str);

pub const CONTEXT_SECRET: &str = "context-secret-7f3a";

/// The tools of these tests, and what the tests observe of them.
pub struct Fixture {
    pub tools: Vec<Tool>,
    /// How many times `restart`'s handler ran, and for which services.
    pub restarted: Arc<Mutex<Vec<String>>>,
    /// What `restart`'s predicate saw: the service and `drain` (defaulted when absent).
    pub asked: Arc<Mutex<Vec<(String, bool)>>>,
    pub echo_runs: Arc<AtomicUsize>,
}

impl Fixture {
    pub fn new() -> Self {
        Self::with_restart_input(true)
    }

    /// With `typed` false, `restart` takes any object: another schema (H3).
    pub fn with_restart_input(typed: bool) -> Self {
        let restarted = Arc::new(Mutex::new(Vec::new()));
        let asked = Arc::new(Mutex::new(Vec::new()));
        let echo_runs = Arc::new(AtomicUsize::new(0));
        let (runs, seen, echoes) = (
            Arc::clone(&restarted),
            Arc::clone(&asked),
            Arc::clone(&echo_runs),
        );
        let echo = Tool::builder("echo", "Repeats its arguments.")
            .handler(move |_ctx: Context, args: Args| {
                echoes.fetch_add(1, Ordering::SeqCst);
                async move { Ok::<_, std::io::Error>(args) }
            })
            .build();
        let is_admin =
            |ctx: &Context| Ok::<_, std::io::Error>(ctx.get::<Admin>().is_some_and(|a| a.0));
        let restart =
            if typed {
                Tool::builder("restart", "Restarts a service now.")
                .handler(move |_ctx: Context, r: Restart| {
                    runs.lock().expect("not poisoned").push(r.service_id.clone());
                    async move { Ok::<_, std::io::Error>(format!("{} restarted", r.service_id)) }
                })
                .available_fn(is_admin)
                .approval_fn(move |_ctx: &Context, r: &Restart| {
                    seen.lock().expect("not poisoned").push((r.service_id.clone(), r.drain));
                    Ok::<_, std::io::Error>(if r.service_id.starts_with("prod-") {
                        Approval::required(format!("{} serves production traffic", r.service_id))
                    } else {
                        Approval::NotRequired
                    })
                })
                .build()
            } else {
                Tool::builder("restart", "Restarts a service now.")
                    .handler(|_ctx: Context, _args: Args| async move {
                        Ok::<_, std::io::Error>("restarted")
                    })
                    .available_fn(is_admin)
                    .require_approval()
                    .build()
            };
        let ship = Tool::builder("ship", "Ships an order from the warehouse.")
            .deferred::<Ship>()
            .build();
        let leaky = Tool::builder("leaky", "Fails with a secret in its error.")
            .handler(|_ctx: Context, _args: Args| async move {
                Err::<String, _>(std::io::Error::other("db://admin:hunter2@db.internal"))
            })
            .build();
        Self {
            tools: vec![echo, restart, ship, leaky],
            restarted,
            asked,
            echo_runs,
        }
    }

    pub fn agent(&self, model: impl Model, key: Option<&[u8]>) -> Agent {
        let mut builder = Agent::builder(model)
            .instructions("Use the tools.")
            .tools(self.tools.clone());
        if let Some(key) = key {
            builder = builder.state_key(key);
        }
        builder.build().expect("the tools are declared right")
    }

    pub fn restarted(&self) -> Vec<String> {
        self.restarted.lock().expect("not poisoned").clone()
    }
}

pub fn admin() -> Context {
    Context::new()
        .with(Admin(true))
        .with(Secret(CONTEXT_SECRET))
}

/// A turn of four calls: one needing no approval, one needing it, one whose predicate says
/// no (with `drain` given), one deferred.
pub fn mixed_turn() -> ScriptedTurn {
    ScriptedTurn::new()
        .text("On it.")
        .call("c1", "echo", r#"{"word":"hi"}"#)
        .call("c2", "restart", r#"{"service_id":"prod-db"}"#)
        .call("c3", "restart", r#"{"service_id":"dev-db","drain":false}"#)
        .call("c4", "ship", r#"{"order_id":"o-1"}"#)
        .usage(10, 5)
}

/// Runs `turns` with the fixture's agent as an admin, expecting a pause.
pub async fn paused(fixture: &Fixture, turns: Vec<ScriptedTurn>, key: Option<&[u8]>) -> RunError {
    let agent = fixture.agent(ScriptedModel::new(turns), key);
    let error = agent
        .run(&admin(), "Restart the databases and ship o-1")
        .await
        .expect_err("the run pauses");
    assert_eq!(error.kind(), ErrorKind::Paused, "{error:#}");
    error
}

/// The paused run of [`mixed_turn`].
pub async fn mixed_pause(fixture: &Fixture) -> PausedRun {
    paused(fixture, vec![mixed_turn()], None)
        .await
        .into_paused()
        .expect("a paused run")
}

pub fn resume_error(result: Result<RunOutput, RunError>) -> ResumeError {
    let error = result.expect_err("the paused run is refused");
    assert_eq!(error.kind(), ErrorKind::Resume, "{error:#}");
    error.resume_error().cloned().expect("a ResumeError")
}

/// Re-seals a paused run's JSON after `edit` changed it, as someone without a key could
/// (SHA-256 over the canonical content): what an unkeyed seal cannot stop.
pub fn forge(paused: &PausedRun, edit: impl FnOnce(&mut Value)) -> PausedRun {
    let mut value = serde_json::to_value(paused).expect("a paused run serializes");
    edit(&mut value["run"]);
    let canonical = serde_json::to_vec(&json!([value["format"], value["version"], value["run"]]));
    let digest: String = Sha256::digest(canonical.expect("JSON serializes"))
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    value["seal"]["digest"] = Value::String(digest);
    serde_json::from_value(value).expect("still a paused run")
}
