//! H7 over nested runs (B2): the property of `pause_property_h7.rs`, for runs whose calls
//! start sub-agent runs. For generated scripts (a top-level agent calling a sub-agent and
//! tools of its own, the sub-agent calling tools that need approval and tools that do not,
//! usage limits of the top-level run that the sub-agent's requests count toward), the run
//! straight through (every tool approved in advance) and the run paused at every approval,
//! at any depth, each pause written to JSON, read back and resumed by freshly built agents
//! (deciding everything at once, allowing tools for the rest of the run, or deciding one call
//! and leaving the others pending), end the same: the same kind, answer and transcript, the
//! same handler runs, and the same number of model requests at every level.
//!
//! Each script comes from its seed; a failure prints it. `H7_NESTED_SCRIPTS=<n>` runs more.
//!
//! One difference is left out by construction: two sub-agent runs started by one turn run
//! concurrently, and what each may spend depends on how they interleave, which a pause
//! changes; a generated turn calls the sub-agent at most once.
mod support {
    pub mod compose;
}

use std::sync::{Arc, Mutex};

use serde_json::json;
use support::compose::{Ledger, Lookup, Transfer};
use tool_runtime::{
    Agent, Context, ConversationModel, ConversationTurn, Decision, Decisions, ErrorKind, Message,
    PausedRun, RunError, RunOptions, RunOutput, Tool, UsageLimits,
};

/// A small PRNG (xorshift64*): the scripts are reproducible from their seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

/// A generated script: the top-level turns, the sub-agent's turns, the top-level limits and
/// how each pause is decided.
#[derive(Debug, Clone)]
struct Script {
    top: Vec<ConversationTurn>,
    worker: Vec<ConversationTurn>,
    requests: Option<u64>,
    strategy: u64,
}

fn script(seed: u64) -> Script {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut top = Vec::new();
    for turn in 0..=rng.below(3) {
        let mut calls = ConversationTurn::new().usage(3, 2);
        if rng.below(3) > 0 {
            let ask = json!({ "request": format!("task {turn}") }).to_string();
            calls = calls.call(&format!("t{turn}w"), "worker", ask);
        }
        if rng.below(2) == 0 {
            calls = calls.call(&format!("t{turn}g"), "gate", r#"{"account":"top"}"#);
        }
        calls = calls.call(&format!("t{turn}n"), "note", r#"{"account":"log"}"#);
        top.push(calls);
    }
    top.push(ConversationTurn::reply("top done"));
    let mut worker = Vec::new();
    for turn in 0..=rng.below(2) {
        let mut calls = ConversationTurn::new().usage(5, 1);
        for pay in 0..=rng.below(2) {
            let cents = 1 + rng.below(500);
            let args = json!({ "to": "acme", "cents": cents }).to_string();
            calls = calls.call(&format!("w{turn}p{pay}"), "pay", args);
        }
        if rng.below(2) == 0 {
            calls = calls.call(&format!("w{turn}r"), "read", r#"{"account":"acme"}"#);
        }
        worker.push(calls);
    }
    worker.push(ConversationTurn::reply("worker done"));
    let requests = (rng.below(3) == 0).then(|| 2 + rng.below(8));
    Script {
        top,
        worker,
        requests,
        strategy: rng.below(3),
    }
}

/// A tool that records its runs, needing approval unless `plain`.
fn tool<I>(name: &str, ledger: &Ledger, gated: bool) -> Tool
where
    I: tool_runtime::Schema + serde::Serialize + Send + 'static,
{
    let (ledger, label) = (ledger.clone(), name.to_owned());
    let builder = Tool::builder(name, "Records its arguments.");
    let builder = if gated {
        builder.require_approval()
    } else {
        builder
    };
    builder
        .handler(move |_ctx: Context, input: I| {
            let ledger = ledger.clone();
            let entry = format!(
                "{label}:{}",
                serde_json::to_string(&input).unwrap_or_default()
            );
            async move {
                ledger.push(entry.clone());
                Ok::<_, std::convert::Infallible>(entry)
            }
        })
        .build()
}

/// Every model a run used, to count the requests each level sent.
#[derive(Default, Clone)]
struct Models(Arc<Mutex<Vec<ConversationModel>>>);

impl Models {
    fn served(&self) -> (usize, usize) {
        let models = self.0.lock().expect("not poisoned");
        let count = |i: usize| {
            models
                .iter()
                .skip(i)
                .step_by(2)
                .map(|m| m.served().len())
                .sum()
        };
        (count(0), count(1))
    }
}

/// The two agents of `script`, freshly built; `straight`: no tool needs approval.
fn agents(script: &Script, ledger: &Ledger, straight: bool, models: &Models) -> Agent {
    let top_model = ConversationModel::new(script.top.clone());
    let worker_model = ConversationModel::new(script.worker.clone());
    models
        .0
        .lock()
        .expect("not poisoned")
        .extend([top_model.clone(), worker_model.clone()]);
    let worker = Agent::builder(worker_model)
        .tool(tool::<Transfer>("pay", ledger, !straight))
        .tool(tool::<Lookup>("read", ledger, false))
        .build()
        .expect("builds");
    let mut options = RunOptions::new();
    if let Some(requests) = script.requests {
        options = options.limits(UsageLimits::new().requests(requests));
    }
    Agent::builder(top_model)
        .agent_tool(worker.as_tool("worker", "Does a task."))
        .tool(tool::<Lookup>("gate", ledger, !straight))
        .tool(tool::<Lookup>("note", ledger, false))
        .options(options)
        .max_turns(8)
        .build()
        .expect("builds")
}

/// How a run ended, as compared.
#[derive(Debug, PartialEq)]
struct End {
    kind: Option<ErrorKind>,
    text: String,
    transcript: Vec<Message>,
    runs: Vec<String>,
    served: (usize, usize),
}

fn end(result: Result<RunOutput, RunError>, ledger: &Ledger, models: &Models) -> End {
    let mut runs = ledger.entries();
    runs.sort();
    let (kind, text, transcript) = match result {
        Ok(out) => (None, out.text, out.transcript),
        Err(e) => (Some(e.kind()), String::new(), e.transcript().to_vec()),
    };
    End {
        kind,
        text,
        transcript,
        runs,
        served: models.served(),
    }
}

/// The decisions for `paused` under strategy `strategy`.
fn decide(paused: &PausedRun, strategy: u64) -> Decisions {
    let paths: Vec<Vec<String>> = paused
        .pending_paths()
        .iter()
        .map(|at| at.path().iter().map(|id| (*id).to_owned()).collect())
        .collect();
    let mut decisions = Decisions::new();
    for (i, path) in paths.iter().enumerate() {
        let decision = match strategy {
            1 => Decision::allow_for_run(),
            2 if i > 0 => continue,
            _ => Decision::Approve,
        };
        decisions = decisions.decide_at(path.clone(), decision);
    }
    if strategy == 2 {
        decisions = decisions.leave_pending();
    }
    decisions
}

async fn paused_run(
    script: &Script,
    ledger: &Ledger,
    models: &Models,
) -> Result<RunOutput, RunError> {
    let mut result = agents(script, ledger, false, models)
        .run(&Context::new(), "Go")
        .await;
    for _ in 0..64 {
        let paused = match result {
            Err(e) if e.kind() == ErrorKind::Paused => e.into_paused().expect("paused"),
            other => return other,
        };
        let text = paused.to_json().expect("serializes");
        let back = PausedRun::from_json(&text).expect("reads");
        let decisions = decide(&back, script.strategy);
        result = agents(script, ledger, false, models)
            .resume(&Context::new(), back, decisions)
            .await;
    }
    panic!("the run kept pausing");
}

#[tokio::test]
async fn b2_h7_a_nested_run_paused_at_every_approval_ends_as_the_straight_run() {
    let count: u64 = std::env::var("H7_NESTED_SCRIPTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(96);
    let mut paused_somewhere = 0;
    for seed in 0..count {
        let script = script(seed);
        let (ledger, models) = (Ledger::new(), Models::default());
        let straight = agents(&script, &ledger, true, &models)
            .run(&Context::new(), "Go")
            .await;
        let straight = end(straight, &ledger, &models);
        let (ledger, models) = (Ledger::new(), Models::default());
        let paused = paused_run(&script, &ledger, &models).await;
        if models.0.lock().expect("not poisoned").len() > 2 {
            paused_somewhere += 1;
        }
        let paused = end(paused, &ledger, &models);
        assert_eq!(paused, straight, "seed {seed}: {script:#?}");
    }
    assert!(
        paused_somewhere > count / 4,
        "the scripts pause: {paused_somewhere}"
    );
}
