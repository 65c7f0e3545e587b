//! The maintenance agent as a durable run on Restate (W1–W5), for `examples/durable.rs` and
//! its tests: an agent whose `restart` tool writes each restart to a side-effect ledger, made
//! effect-once by the call's idempotency key (W2); a production service's restart waits for
//! approval (W3). Its model is a plan that answers from the conversation alone (the offline
//! default), or a real provider when one is configured in the environment.
//!
//! The ledger is a directory (`DURABLE_LEDGER`): `attempts` gets a line each time a handler
//! starts, `effects` a line the first time a key's restart happens. The tests read both.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use serde::Serialize;
use tool_durable::AgentRun;
use tool_runtime::{
    Agent, BoxError, Context, Model,
    model::{FinishReason, Message, ModelError, ModelEvent, ModelRequest, ModelStream, Usage},
    tool,
};

use crate::maintenance::{RestartInput, Role, is_admin, principal, restart_needs_ok};

/// The services the example's run restarts: one that needs no approval, one that serves
/// production.
pub const SERVICES: [&str; 2] = ["svc-7", "svc-42"];

/// The services a message names (`svc-…` words), in order.
pub fn services_in(message: &str) -> Vec<String> {
    message
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|word| word.starts_with("svc-") && word.len() > 4)
        .map(str::to_owned)
        .collect()
}

/// The side-effect ledger of the durable example's restarts (W6).
#[derive(Debug, Clone)]
pub struct Ledger {
    dir: PathBuf,
}

impl Ledger {
    /// The ledger in `dir`, created if missing.
    ///
    /// # Errors
    ///
    /// When the directory cannot be made.
    pub fn open(dir: impl Into<PathBuf>) -> std::io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(Self { dir })
    }

    /// Each handler start, as `key service pid` lines (the worker process that ran it).
    pub fn attempts(&self) -> Vec<String> {
        lines(&self.dir.join("attempts"))
    }

    /// Each restart that happened, as `key service` lines: one per key.
    pub fn effects(&self) -> Vec<String> {
        lines(&self.dir.join("effects"))
    }

    fn append(&self, file: &str, line: &str) -> std::io::Result<()> {
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(file))?;
        // One write per line: appends from two worker processes never interleave.
        file.write_all(format!("{line}\n").as_bytes())?;
        file.sync_data()
    }
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// What a restart reports: the same for every attempt of one call (W2), as an idempotent
/// service answers a repeated request.
#[derive(Debug, Serialize)]
pub struct Restarted {
    /// The service restarted.
    pub service_id: String,
    /// Its state now.
    pub state: &'static str,
}

/// How long a handler takes between its start and its effect (`DURABLE_TOOL_DELAY_MS`), so
/// that a test can kill the worker in the middle of a call.
fn tool_delay() -> Duration {
    delay("DURABLE_TOOL_DELAY_MS")
}

fn delay(variable: &str) -> Duration {
    std::env::var(variable)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::ZERO, Duration::from_millis)
}

/// Restart a service now (admins only). A production service's restart waits for approval.
#[tool(name = "restart", available = is_admin, approval = restart_needs_ok, destructive)]
pub async fn durable_restart(ctx: Context, input: RestartInput) -> Result<Restarted, BoxError> {
    let key = ctx
        .idempotency_key()
        .ok_or("a restart runs inside a run's call")?;
    let ledger = ctx.require::<Ledger>()?;
    let pid = std::process::id();
    ledger.append("attempts", &format!("{key} {} {pid}", input.service_id))?;
    tokio::time::sleep(tool_delay()).await;
    // W2: the effect happens once per key, however many times the call runs.
    let line = format!("{key} {}", input.service_id);
    if !ledger.effects().contains(&line) {
        ledger.append("effects", &line)?;
    }
    Ok(Restarted {
        service_id: input.service_id,
        state: "restarting",
    })
}

/// The offline model of the durable example: restarts the services the user's message names
/// ([`services_in`]) in one turn (or one a turn, when the message says "one at a time"), then
/// answers with what the restarts said. It answers from the conversation alone, as a provider
/// does, so a worker that restarts mid-run asks it only for the turns its journal lacks. Its
/// events come `DURABLE_MODEL_DELAY_MS` apart, so that a test can kill a worker mid-stream.
///
/// With a ledger, each request it is asked writes `request N pid` to the ledger's `requests`
/// (N: the turn, counted from the conversation), for the tests that kill a worker at each
/// step.
#[derive(Debug, Default, Clone)]
pub struct RestartPlan {
    ledger: Option<Ledger>,
}

impl RestartPlan {
    /// The plan, writing each request it is asked to `ledger`.
    pub fn with_ledger(ledger: Ledger) -> Self {
        Self {
            ledger: Some(ledger),
        }
    }
}

/// The user's message of a conversation.
fn asked(messages: &[Message]) -> &str {
    messages
        .iter()
        .find_map(|m| match m {
            Message::User { text } => Some(text.as_str()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The calls of the plan's next turn, given what the user asked and the results so far: every
/// service at once, or (asked "one at a time") the next one, until none is left.
fn next_calls(asked: &str, done: usize) -> Vec<String> {
    let services = services_in(asked);
    if asked.contains("one at a time") {
        services.into_iter().skip(done).take(1).collect()
    } else if done == 0 {
        services
    } else {
        Vec::new()
    }
}

impl Model for RestartPlan {
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        if let Some(ledger) = &self.ledger {
            let turn = 1 + request
                .messages
                .iter()
                .filter(|m| matches!(m, Message::Assistant { .. }))
                .count();
            let line = format!("request {turn} {}", std::process::id());
            if let Err(e) = ledger.append("requests", &line) {
                let error = ModelError::Transport(format!("the ledger failed: {e}").into());
                return Box::pin(outage(error));
            }
        }
        // An outage, while the file `DURABLE_MODEL_DOWN` names exists: the provider cannot be
        // reached (a failure a later attempt may not have).
        if let Some(down) = std::env::var_os("DURABLE_MODEL_DOWN")
            && Path::new(&down).exists()
        {
            let error =
                ModelError::Transport("the model provider is unreachable (an outage)".into());
            return Box::pin(outage(error));
        }
        let results: Vec<String> = request
            .messages
            .iter()
            .filter_map(|m| m.tool_result())
            .map(|r| format!("{}: {}", r.name, r.text))
            .collect();
        let mut events = Vec::new();
        let calls = next_calls(asked(request.messages), results.len());
        if !calls.is_empty() {
            for (index, service) in calls.iter().enumerate() {
                events.push(ModelEvent::ToolCallStart {
                    index,
                    id: format!("c{}", results.len() + index + 1),
                    name: "restart".to_owned(),
                });
                events.push(ModelEvent::ToolCallArguments {
                    index,
                    fragment: format!(r#"{{"service_id":"{service}"}}"#),
                });
            }
            events.push(ModelEvent::Finish(FinishReason::ToolCalls));
        } else {
            for part in ["Done. ", &results.join("; ")] {
                events.push(ModelEvent::TextDelta(part.to_owned()));
            }
            events.push(ModelEvent::Finish(FinishReason::Stop));
        }
        events.push(ModelEvent::Usage(Usage::new(100, 20)));
        Box::pin(Paced {
            events: events.into_iter(),
            gap: delay("DURABLE_MODEL_DELAY_MS"),
            sleep: None,
            failure: None,
        })
    }

    fn provider_name(&self) -> &str {
        "offline"
    }

    fn model_name(&self) -> &str {
        "restart-plan"
    }
}

/// A stream of one failure.
fn outage(error: ModelError) -> Paced {
    Paced {
        events: Vec::new().into_iter(),
        gap: Duration::ZERO,
        sleep: None,
        failure: Some(error),
    }
}

/// A reply's events, `gap` apart, or a failure.
struct Paced {
    events: std::vec::IntoIter<ModelEvent>,
    gap: Duration,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    failure: Option<ModelError>,
}

impl futures_core::Stream for Paced {
    type Item = Result<ModelEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        if let Some(failure) = self.failure.take() {
            return Poll::Ready(Some(Err(failure)));
        }
        if !self.gap.is_zero() {
            let gap = self.gap;
            let sleep = self
                .sleep
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(gap)));
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.sleep = None;
        }
        Poll::Ready(self.events.next().map(Ok))
    }
}

/// The durable example's agent on `model`: the `restart` tool, for admins.
///
/// # Errors
///
/// When the agent is declared wrong (it is not).
pub fn agent(model: impl Model) -> Result<Agent, BoxError> {
    Ok(Agent::builder(model)
        .name("maintenance")
        .instructions("Restart the services the operator names, then say what happened.")
        .tool(Restart)
        // A run asked to restart services one at a time takes a turn for each.
        .max_turns(32)
        .build()?)
}

/// The workflow a worker serves: the agent on [`RestartPlan`] (or a configured provider),
/// each run's context holding its principal (`{"principal": "ada"}`: an admin) and `ledger`.
///
/// # Errors
///
/// When the provider's configuration is wrong.
pub fn workflow(ledger: Ledger) -> Result<AgentRun, BoxError> {
    let agent = match tool_runtime::providers::from_env()? {
        Some(real) => agent(real)?,
        None => agent(RestartPlan::with_ledger(ledger.clone()))?,
    };
    Ok(AgentRun::new(agent).with_context(move |data| {
        let name = data
            .get("principal")
            .and_then(|p| p.as_str())
            .ok_or("the request names no principal")?;
        let role = match name {
            "ada" => Role::Admin,
            "grace" => Role::Operator,
            _ => return Err(format!("`{name}` is not a known principal")),
        };
        let who = if role == Role::Admin { "ada" } else { "grace" };
        Ok(Context::new()
            .with(principal(who, role))
            .with(ledger.clone()))
    }))
}
