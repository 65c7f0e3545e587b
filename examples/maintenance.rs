//! The maintenance assistant of DESIGN §1, run end to end: `cargo run --example maintenance`.
//!
//! One tool, `lookup-window`, over an in-memory window service, behind a policy that hides it
//! from guests; and one tool, `restart-service`, that only admins are offered. Three runs:
//!
//! 1. an operator on the offline model, which calls every tool it is shown with arguments
//!    generated from the schema: invalid ones first, then corrected ones;
//! 2. the same operator on a scripted storyline: a validation failure the model corrects, a
//!    successful lookup, a `ToolError`, a redacted internal failure and a guessed hidden tool;
//! 3. a guest, who is offered no tool at all.
//!
//! Each run prints what the model was shown, each call with what the model got back, and what
//! only the application sees.

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;
use tool_runtime::{
    Agent, Arguments, BoxError, Context, Model, OfflineModel, RunEvent, Schema, ScriptedModel,
    ScriptedTurn, ToolError, tool,
};

// ─── The application ────────────────────────────────────────────────────────────────────────

/// What a principal may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Guest,
    Operator,
    Admin,
}

/// The authenticated caller, put in the run's context by the application (never by the model).
#[derive(Debug, Clone)]
struct Principal {
    name: &'static str,
    role: Role,
    /// The services whose maintenance this principal may see.
    services: &'static [&'static str],
}

/// One scheduled window.
#[derive(Debug, Clone)]
struct Window {
    in_days: u32,
    starts_at: &'static str,
    ends_at: &'static str,
}

/// Why a lookup found nothing.
#[derive(Debug)]
enum LookupError {
    /// No window, or none the caller may see (the two are not told apart).
    NoWindow,
    /// The backing store failed: an internal detail, never for the model.
    Backend(String),
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupError::NoWindow => f.write_str("no maintenance window"),
            LookupError::Backend(detail) => write!(f, "maintenance store failed: {detail}"),
        }
    }
}

impl std::error::Error for LookupError {}

/// The application's maintenance windows, in memory.
struct Windows {
    by_service: HashMap<&'static str, Window>,
}

impl Windows {
    fn demo() -> Self {
        let mut by_service = HashMap::new();
        by_service.insert(
            "svc-42",
            Window {
                in_days: 3,
                starts_at: "2026-12-01T02:00:00Z",
                ends_at: "2026-12-01T04:00:00Z",
            },
        );
        by_service.insert(
            "svc-billing",
            Window {
                in_days: 20,
                starts_at: "2026-12-18T01:00:00Z",
                ends_at: "2026-12-18T01:30:00Z",
            },
        );
        Self { by_service }
    }

    /// The next window of `service_id` within `days`, if the caller may see it. The
    /// principal comes from the trusted context, not from the model's arguments.
    async fn find_authorized(
        &self,
        ctx: &Context,
        service_id: &str,
        days: u32,
    ) -> Result<WindowSummary, LookupError> {
        let principal = ctx
            .get::<Principal>()
            .ok_or_else(|| LookupError::Backend("no principal in the context".to_owned()))?;
        if service_id == "svc-legacy" {
            return Err(LookupError::Backend(
                "connection to maint-db.internal:5432 refused for user maint_ro".to_owned(),
            ));
        }
        if !principal.services.contains(&service_id) {
            return Err(LookupError::NoWindow);
        }
        match self.by_service.get(service_id) {
            Some(w) if w.in_days <= days => Ok(WindowSummary {
                starts_at: w.starts_at.to_owned(),
                ends_at: w.ends_at.to_owned(),
            }),
            _ => Err(LookupError::NoWindow),
        }
    }
}

// ─── The tools ──────────────────────────────────────────────────────────────────────────────

/// Input of the maintenance lookup.
#[derive(Schema)]
struct WindowQuery {
    /// The service identifier supplied by the user.
    #[schema(
        min_len = 1,
        max_len = 64,
        pattern = "^[a-z0-9-]+$",
        example = "svc-42"
    )]
    service_id: String,
    /// How many days ahead to look.
    #[schema(default = 7, range = 1..=30)]
    days: u32,
}

/// The approved fields of a window: nothing else reaches the model.
#[derive(Serialize)]
struct WindowSummary {
    starts_at: String,
    ends_at: String,
}

/// Find the authorized maintenance window for a service.
#[tool(name = "lookup-window", available = can_view_maintenance)]
async fn find_window(ctx: Context, input: WindowQuery) -> Result<WindowSummary, BoxError> {
    let windows = ctx.require::<Windows>()?;
    match windows
        .find_authorized(&ctx, &input.service_id, input.days)
        .await
    {
        Err(LookupError::NoWindow) => {
            Err(ToolError::new("No maintenance window is scheduled.").into())
        }
        other => other.map_err(Into::into),
    }
}

/// Whether the caller may see maintenance windows at all (observational, A1).
async fn can_view_maintenance(ctx: &Context) -> Result<bool, BoxError> {
    let principal = ctx.require::<Principal>()?;
    Ok(matches!(principal.role, Role::Operator | Role::Admin))
}

/// Restart a service now.
#[tool(name = "restart-service", available = is_admin)]
async fn restart_service(
    #[schema(describe = "The service to restart.", pattern = "^[a-z0-9-]+$")] service_id: String,
) -> String {
    format!("{service_id} restarted")
}

/// Only admins are offered restarts.
fn is_admin(ctx: &Context) -> Result<bool, BoxError> {
    Ok(ctx.require::<Principal>()?.role == Role::Admin)
}

// ─── Choosing a model ───────────────────────────────────────────────────────────────────────

/// The model of the offline acts.
///
/// ┌─ PROVIDERS ────────────────────────────────────────────────────────────────────────────┐
/// │ When provider drivers exist, this is where one is chosen: an OpenAI driver when        │
/// │ `OPENAI_API_KEY` (and optionally `OPENAI_BASE_URL`) is set, an Anthropic driver when   │
/// │ `ANTHROPIC_API_KEY` is set. No driver is built in yet, so the run stays offline.       │
/// └────────────────────────────────────────────────────────────────────────────────────────┘
fn offline_model() -> OfflineModel {
    let configured: Vec<&str> = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"]
        .into_iter()
        .filter(|key| std::env::var_os(key).is_some())
        .collect();
    if !configured.is_empty() {
        println!(
            "{} is set, but no provider driver is built in yet: running on the offline model.",
            configured.join(" and ")
        );
    }
    OfflineModel::new().arguments(Arguments::InvalidThenValid)
}

/// The storyline of act 2, turn by turn: what a real model might do.
fn storyline() -> ScriptedModel {
    ScriptedModel::new([
        ScriptedTurn::new()
            .text("Let me look that up.")
            .call(
                "call-1",
                "lookup-window",
                r#"{"service_id": "SVC 42!", "days": 0}"#,
            )
            .usage(310, 24),
        ScriptedTurn::new()
            .text("I'll fix the arguments.")
            .call("call-2", "lookup-window", r#"{"service_id": "svc-42"}"#)
            .usage(420, 18),
        ScriptedTurn::new()
            .call(
                "call-3",
                "lookup-window",
                r#"{"service_id": "svc-7", "days": 30}"#,
            )
            .call("call-4", "lookup-window", r#"{"service_id": "svc-legacy"}"#)
            .usage(510, 40),
        ScriptedTurn::new()
            .call("call-5", "restart-service", r#"{"service_id": "svc-42"}"#)
            .usage(600, 16),
        ScriptedTurn::reply(
            "svc-42 is down on 2026-12-01 from 02:00 to 04:00 UTC. svc-7 has no window \
             scheduled, and I could not check svc-legacy. I cannot restart services for you.",
        )
        .usage(650, 45),
    ])
}

// ─── Running and printing ───────────────────────────────────────────────────────────────────

fn principal(name: &'static str, role: Role) -> Principal {
    Principal {
        name,
        role,
        services: &["svc-42", "svc-7", "svc-billing", "svc-legacy"],
    }
}

async fn act(
    title: &str,
    model: impl Model,
    who: Principal,
    question: &str,
) -> Result<(), BoxError> {
    println!("\n══ {title} ══");
    println!("{} ({:?}) asks: {question}", who.name, who.role);
    let agent = Agent::builder(model)
        .instructions("You help operators plan maintenance.")
        .tool(LookupWindow)
        .tool(RestartService)
        .max_concurrency(4)
        .build()?;
    let ctx = Context::new().with(who).with(Windows::demo());

    let mut stream = agent.run_stream(&ctx, question);
    let mut streaming_text = false;
    while let Some(event) = stream.next().await {
        if streaming_text && !matches!(event, Ok(RunEvent::TextDelta { .. })) {
            println!();
            streaming_text = false;
        }
        match event? {
            RunEvent::Started { advertised } => {
                println!("The model is shown {} tool(s):", advertised.len());
                for spec in agent.tool_specs() {
                    if advertised.iter().any(|name| name == spec.name()) {
                        println!("  • {}: {}", spec.name(), spec.description());
                        println!("    schema: {}", spec.parameters_json());
                    }
                }
            }
            RunEvent::TextDelta { text, .. } => {
                if !streaming_text {
                    print!("  model says: ");
                    streaming_text = true;
                }
                print!("{}", text.replace('\n', "\n    "));
            }
            RunEvent::ToolCall { call, .. } => {
                println!("  → {} calls {} {}", call.id, call.name, call.arguments);
            }
            RunEvent::CallFinished(record) => {
                let text = record.text().replace('\n', "\n      ");
                println!("  ← {} gets back [{}]: {text}", record.id, record.kind());
                if let Some(error) = record.error() {
                    println!("      (application only: {error:#})");
                }
            }
            RunEvent::TurnEnd { turn, usage, .. } => {
                println!(
                    "  ─ turn {turn} done: {} tokens in, {} out",
                    usage.input_tokens, usage.output_tokens
                );
            }
            RunEvent::Finished(out) => {
                println!(
                    "Done: the answer above came after {} turn(s) and {} call(s), {} tokens in all.",
                    out.turns(),
                    out.calls.len(),
                    out.total_usage().total()
                );
            }
            _ => {}
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    act(
        "Act 1 · the offline model: generated arguments, invalid then corrected",
        offline_model(),
        principal("ada", Role::Operator),
        "When is svc-42 down next?",
    )
    .await?;
    act(
        "Act 2 · a scripted storyline: validation, success, ToolError, a redacted failure, a guessed hidden tool",
        storyline(),
        principal("ada", Role::Operator),
        "When are svc-42, svc-7 and svc-legacy down, and can you restart svc-42?",
    )
    .await?;
    act(
        "Act 3 · a guest is offered no tool",
        offline_model(),
        principal("bob", Role::Guest),
        "When is svc-42 down next?",
    )
    .await?;
    Ok(())
}
