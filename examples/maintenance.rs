//! The maintenance assistant of DESIGN §1, run end to end: `cargo run --example maintenance`.
//!
//! One tool, `lookup-window`, over an in-memory window service, behind a policy that hides it
//! from guests; and one tool, `restart-service`, that only admins are offered. Three runs:
//!
//! 1. an operator on the offline model, which calls every tool it is shown with arguments
//!    generated from the schema: invalid ones first, then corrected ones (or on a real
//!    provider, when `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY` or
//!    `GEMINI_API_KEY` is set);
//! 2. the same operator on a scripted storyline: a validation failure the model corrects, a
//!    successful lookup, a `ToolError`, a redacted internal failure and a guessed hidden tool;
//! 3. a guest, who is offered no tool at all;
//! 4. a typed answer (O2): the operator asks for a `MaintenanceBrief` and gets it parsed by
//!    its own schema, from the same model as act 1;
//! 5. a retry budget ending a run (L1): a model that keeps sending arguments the schema
//!    refuses, stopped at the tool's budget rather than at `max_turns`.
//!
//! Each run prints what the model was shown, each call with what the model got back, and what
//! only the application sees. The domain (the window service, the principals, the tools) is
//! `tool_examples::maintenance`, which `examples/mcp_server.rs` serves over MCP.
//!
//! `cargo run --example maintenance -- --surface` prints the agent's tool surface instead (C2),
//! the document `examples/surface/maintenance.json` holds, and runs nothing.

use tool_examples::maintenance::{
    LookupWindow, Principal, RestartService, Role, Windows, principal,
};
use tool_runtime::RunRequest;
use tool_runtime::{
    Agent, BoxError, Context, ErrorKind, Model, OfflineModel, RunEvent, Schema, ScriptedModel,
    testing::{Arguments, ScriptedTurn},
};

/// The typed answer of act 4 (O2): what the operator wants to know, as data.
#[derive(Schema, Debug)]
pub struct MaintenanceBrief {
    /// The service the brief is about.
    #[schema(pattern = "^[a-z0-9-]+$")]
    pub service_id: String,
    /// Whether a window is scheduled.
    pub scheduled: bool,
    /// When it starts (RFC 3339), if scheduled.
    #[schema(format = "date-time")]
    pub starts_at: Option<String>,
}

// ─── Choosing a model ───────────────────────────────────────────────────────────────────────

/// The model of acts 1 and 3: a real provider when one is configured in the environment
/// (`OPENAI_API_KEY`; `OPENAI_BASE_URL` for an OpenAI-compatible server such as Ollama, with
/// `OPENAI_MODEL`; or `ANTHROPIC_API_KEY`; or `GEMINI_API_KEY`: see
/// `tool_runtime::providers::from_env`), else the
/// embedded offline model, which calls every tool it is shown with arguments generated from
/// the schema, invalid ones first.
fn model() -> Result<(Box<dyn Model>, String), BoxError> {
    Ok(match tool_runtime::providers::from_env()? {
        Some(real) => {
            let label = format!("{} model {}", real.provider(), real.model_name());
            (Box::new(real), label)
        }
        None => (
            Box::new(OfflineModel::new().arguments(Arguments::InvalidThenValid)),
            "the offline model: generated arguments, invalid then corrected".to_owned(),
        ),
    })
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
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            let mut source = error.source();
            while let Some(cause) = source {
                eprintln!("  caused by: {cause}");
                source = cause.source();
            }
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), BoxError> {
    // C2: `-- --surface` prints the agent's tool surface, the document
    // `examples/surface/maintenance.json` holds, and runs nothing.
    if std::env::args().skip(1).any(|arg| arg == "--surface") {
        return print_surface();
    }
    let (first, label) = model()?;
    act(
        &format!("Act 1 · {label}"),
        first,
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
        model()?.0,
        principal("bob", Role::Guest),
        "When is svc-42 down next?",
    )
    .await?;
    typed_answer().await?;
    retry_budget().await
}

/// The agent's tool surface (C2), as `tests/surface.rs` holds it.
#[cfg(feature = "mcp")]
fn print_surface() -> Result<(), BoxError> {
    print!("{}", tool_examples::surface::maintenance()?.to_json());
    Ok(())
}

/// The surface includes what MCP lists: without the `mcp` feature there is none to print.
#[cfg(not(feature = "mcp"))]
fn print_surface() -> Result<(), BoxError> {
    Err(
        "the tool surface includes what MCP lists: build with the `mcp` feature (on by default)"
            .into(),
    )
}

/// Act 4 (O2): the same question, answered as a `MaintenanceBrief`.
async fn typed_answer() -> Result<(), BoxError> {
    println!("\n══ Act 4 · a typed answer: a MaintenanceBrief, parsed by its own schema ══");
    let ctx = Context::new()
        .with(principal("ada", Role::Operator))
        .with(Windows::demo());
    let agent = Agent::builder(model()?.0)
        .instructions("You help operators plan maintenance.")
        .tool(LookupWindow)
        .build()?;
    let brief = agent
        .execute(
            &ctx,
            RunRequest::new("Brief me on svc-42's next window.").typed::<MaintenanceBrief>(),
        )
        .await?;
    println!("answer (typed): {:?}", brief.value);
    println!("as the model sent it: {}", brief.output.text);
    Ok(())
}

/// Act 5 (L1): a model that keeps sending `days: 0` ends the run at the tool's retry budget.
async fn retry_budget() -> Result<(), BoxError> {
    println!("\n══ Act 5 · a retry budget: the same invalid call, again and again ══");
    let stubborn = ScriptedModel::new((1..=10).map(|i| {
        ScriptedTurn::new().call(
            format!("call-{i}"),
            "lookup-window",
            r#"{"service_id": "svc-42", "days": 0}"#,
        )
    }));
    let ctx = Context::new()
        .with(principal("ada", Role::Operator))
        .with(Windows::demo());
    let agent = Agent::builder(stubborn)
        .tool(LookupWindow)
        .retries(2)
        .build()?;
    match agent.run(&ctx, "When is svc-42 down next?").await {
        Err(error) if error.kind() == ErrorKind::RetriesExhausted => {
            println!("the run ended: {error}");
            for violation in error.violations() {
                println!("  last violation: {violation}");
            }
            println!(
                "requests made: {} (of the 10 scripted)",
                error.usage().len()
            );
            Ok(())
        }
        other => Err(format!("expected the retry budget to end the run, got {other:?}").into()),
    }
}
