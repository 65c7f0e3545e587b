//! A worker whose durable runs take several calls a turn, run concurrently (W9), for the
//! tests that kill it mid-turn (`tests/durable_w9.rs`).
//!
//! The agent's model reads the items the user's message names (`item-…` words) and asks, each
//! turn, for the next `DURABLE_TURN_CALLS` of them (default 4), one `process` call each; once
//! none is left it answers with the calls' results, in the conversation's order. It answers
//! from the conversation alone, as a provider does, so a worker that restarts gets the turn
//! its journal needs. The agent runs at most `DURABLE_MAX_CONCURRENCY` calls at once
//! (default 2). One deployment serves four workflows of it (W10): `AgentRun` (calls run
//! concurrently, W9), `Sequential` (one at a time), `TypedBatches` (a typed answer) and
//! `Orchestrated` (an agent that hands the work to this one as its sub-agent, B2; its own model
//! requests go to the ledger's `requests` as `delegate N pid`).
//!
//! The ledger (`DURABLE_LEDGER`, a directory) gets, per line: in `requests`, `request N pid`
//! for each model request; in `flight`, `begin key pid` and `end key pid` around each
//! handler's work (so a test counts the calls in flight in one process); in `attempts`,
//! `key item pid` at each handler start; in `effects`, `key item` the first time a key's
//! effect happens (W2). A handler takes `DURABLE_TOOL_DELAY_MS` (default 0) before its effect.
//! While the ledger holds a file `crash`, the call of `item-3` aborts its worker at its start,
//! as a call that crashes its process on every attempt would.
//!
//! ```text
//! PORT=9080 DURABLE_LEDGER=/tmp/ledger cargo run -p tool-durable --example durable_parallel
//! ```

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use tool_durable::{AgentRun, Serving};
use tool_runtime::{
    Agent, BoxError, Context, FinishReason, Message, Model, ModelError, ModelEvent, ModelRequest,
    ModelStream, Schema, Usage, tool,
};

/// A number from the environment variable `name`, or `default`.
fn number<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// The ledger's directory.
fn ledger() -> PathBuf {
    std::env::var_os("DURABLE_LEDGER")
        .map_or_else(|| PathBuf::from("target/durable-ledger"), PathBuf::from)
}

/// Appends `line` to the ledger's `file`, in one write.
fn append(file: &str, line: &str) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(ledger().join(file))?;
    file.write_all(format!("{line}\n").as_bytes())?;
    file.sync_data()
}

/// Input of a `process` call.
#[derive(Schema)]
pub struct ProcessInput {
    /// The item to process.
    pub item: String,
}

/// What a `process` call reports: the same for every attempt of one call (W2).
#[derive(Debug, Serialize)]
pub struct Processed {
    /// The item.
    pub item: String,
    /// Its state now.
    pub state: &'static str,
}

/// Process an item: its effect once per idempotency key, however often the call runs.
#[tool(name = "process")]
pub async fn process(ctx: Context, input: ProcessInput) -> Result<Processed, BoxError> {
    let key = ctx
        .idempotency_key()
        .ok_or("a process call runs inside a run's call")?;
    let pid = std::process::id();
    append("attempts", &format!("{key} {} {pid}", input.item))?;
    // A call that crashes its worker while the ledger holds `crash`: the third item's.
    if input.item == "item-3" && ledger().join("crash").exists() {
        std::process::abort();
    }
    append("flight", &format!("begin {key} {pid}"))?;
    tokio::time::sleep(Duration::from_millis(number("DURABLE_TOOL_DELAY_MS", 0))).await;
    let line = format!("{key} {}", input.item);
    let effects = std::fs::read_to_string(ledger().join("effects")).unwrap_or_default();
    if !effects.lines().any(|done| done == line) {
        append("effects", &line)?;
    }
    append("flight", &format!("end {key} {pid}"))?;
    Ok(Processed {
        item: input.item,
        state: "processed",
    })
}

/// The model: the next `DURABLE_TURN_CALLS` items a turn, then the results.
struct Batches;

/// The items a message names (`item-…` words), in order.
fn items(message: &str) -> Vec<String> {
    message
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|word| word.starts_with("item-") && word.len() > 5)
        .map(str::to_owned)
        .collect()
}

/// Writes `what N pid` to the ledger's `requests` for a request at turn N; a stream that
/// fails the request when the ledger cannot be written.
fn logged<'a>(what: &str, request: &ModelRequest<'_>) -> Result<(), ModelStream<'a>> {
    let turn = 1 + request
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Assistant { .. }))
        .count();
    append("requests", &format!("{what} {turn} {}", std::process::id())).map_err(|e| {
        let error = ModelError::Transport(format!("the ledger failed: {e}").into());
        let failed: ModelStream<'a> = Box::pin(futures_util::stream::iter([Err(error)]));
        failed
    })
}

/// The user's message of a request.
fn asked<'r>(request: &'r ModelRequest<'_>) -> &'r str {
    request
        .messages
        .iter()
        .find_map(|m| match m {
            Message::User { text } => Some(text.as_str()),
            _ => None,
        })
        .unwrap_or_default()
}

impl Model for Batches {
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        if let Err(failed) = logged("request", &request) {
            return failed;
        }
        let asked = asked(&request);
        let results: Vec<String> = request
            .messages
            .iter()
            .filter_map(|m| m.tool_result())
            .map(|r| format!("{}: {}", r.name, r.text))
            .collect();
        let per_turn = number("DURABLE_TURN_CALLS", 4_usize).max(1);
        let next: Vec<String> = items(asked)
            .into_iter()
            .skip(results.len())
            .take(per_turn)
            .collect();
        let mut events = Vec::new();
        if next.is_empty() && request.answer.is_some() {
            // A typed answer (O2), as the provider's structured output gives it.
            let summary = serde_json::json!({"processed": results.len(), "items": items(asked)});
            events.push(ModelEvent::TextDelta(summary.to_string()));
            events.push(ModelEvent::Finish(FinishReason::Stop));
        } else if next.is_empty() {
            events.push(ModelEvent::TextDelta("Done. ".to_owned()));
            events.push(ModelEvent::TextDelta(results.join("; ")));
            events.push(ModelEvent::Finish(FinishReason::Stop));
        } else {
            for (index, item) in next.iter().enumerate() {
                events.push(ModelEvent::ToolCallStart {
                    index,
                    id: format!("c{}", results.len() + index + 1),
                    name: "process".to_owned(),
                });
                events.push(ModelEvent::ToolCallArguments {
                    index,
                    fragment: format!(r#"{{"item":"{item}"}}"#),
                });
            }
            events.push(ModelEvent::Finish(FinishReason::ToolCalls));
        }
        events.push(ModelEvent::Usage(Usage::new(100, 20)));
        Box::pin(futures_util::stream::iter(events.into_iter().map(Ok)))
    }

    fn native_answers(&self) -> bool {
        true
    }

    fn provider_name(&self) -> &str {
        "offline"
    }

    fn model_name(&self) -> &str {
        "batches"
    }
}

/// The model of the `Orchestrated` workflow's agent (B2): it hands the user's message to its
/// sub-agent `batcher` (the [`Batches`] agent) in one call, then answers with its result.
struct Delegates;

impl Model for Delegates {
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        if let Err(failed) = logged("delegate", &request) {
            return failed;
        }
        let result = request.messages.iter().find_map(|m| m.tool_result());
        let mut events = match result {
            Some(result) => vec![
                ModelEvent::TextDelta(format!("Delegated. {}", result.text)),
                ModelEvent::Finish(FinishReason::Stop),
            ],
            None => {
                let arguments = serde_json::json!({ "request": asked(&request) }).to_string();
                vec![
                    ModelEvent::ToolCallStart {
                        index: 0,
                        id: "d1".to_owned(),
                        name: "batcher".to_owned(),
                    },
                    ModelEvent::ToolCallArguments {
                        index: 0,
                        fragment: arguments,
                    },
                    ModelEvent::Finish(FinishReason::ToolCalls),
                ]
            }
        };
        events.push(ModelEvent::Usage(Usage::new(10, 2)));
        Box::pin(futures_util::stream::iter(events.into_iter().map(Ok)))
    }

    fn provider_name(&self) -> &str {
        "offline"
    }

    fn model_name(&self) -> &str {
        "delegates"
    }
}

/// The `Orchestrated` workflow's agent: [`Delegates`], holding the [`Batches`] agent as its
/// tool `batcher` (B1), whose steps its durable run journals as its own (B2).
fn orchestrator() -> Result<Agent, BoxError> {
    Ok(Agent::builder(Delegates)
        .name("orchestrator")
        .agent_tool(agent()?.as_tool("batcher", "Processes the items a request names."))
        .build()?)
}

/// The typed answer of the `TypedBatches` workflow.
#[derive(Schema)]
pub struct Summary {
    /// How many items were processed.
    pub processed: u32,
    /// The items.
    pub items: Vec<String>,
}

/// The agent on [`Batches`].
fn agent() -> Result<Agent, BoxError> {
    Ok(Agent::builder(Batches)
        .name("batches")
        .instructions("Process the items the user names, then say what happened.")
        .tool(Process)
        .max_concurrency(number("DURABLE_MAX_CONCURRENCY", 2))
        .max_turns(32)
        .build()?)
}

/// The deployment's workflows (W10): `AgentRun`, the agent with its calls run concurrently
/// (W9); `Sequential`, the same agent with its calls one at a time; `TypedBatches`, the agent
/// answering a [`Summary`]; `Orchestrated`, an agent that hands the work to this one as its
/// sub-agent (B2).
fn serving() -> Result<Serving, BoxError> {
    let attempts = number("DURABLE_STEP_ATTEMPTS", tool_durable::DEFAULT_STEP_ATTEMPTS);
    let parallel = AgentRun::new(agent()?).parallel_calls(true);
    let sequential = AgentRun::new(agent()?).named("Sequential")?;
    let typed = AgentRun::new(agent()?)
        .parallel_calls(true)
        .typed::<Summary>()
        .named("TypedBatches")?;
    let orchestrated = AgentRun::new(orchestrator()?).named("Orchestrated")?;
    Ok(Serving::new(parallel)
        .with(sequential)?
        .with(typed)?
        .with(orchestrated)?
        .step_attempts(attempts))
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    std::fs::create_dir_all(ledger())?;
    let port: u16 = number("PORT", 9080);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!(
        "worker serving AgentRun, Sequential, TypedBatches and Orchestrated on \
         http://127.0.0.1:{port}"
    );
    serving()?.serve(listener, tokio::signal::ctrl_c()).await;
    Ok(())
}
