//! The maintenance assistant of DESIGN §1, run end to end: `cargo run --example maintenance`.
//!
//! One tool, `lookup-window`, over an in-memory window service, behind a policy that hides it
//! from guests; and one tool, `restart-service`, that only admins are offered. Three runs:
//!
//! 1. an operator on the offline model, which calls every tool it is shown with arguments
//!    generated from the schema: invalid ones first, then corrected ones (or on a real
//!    provider, when `OPENAI_API_KEY`, `OPENAI_BASE_URL` or `ANTHROPIC_API_KEY` is set);
//! 2. the same operator on a scripted storyline: a validation failure the model corrects, a
//!    successful lookup, a `ToolError`, a redacted internal failure and a guessed hidden tool;
//! 3. a guest, who is offered no tool at all.
//!
//! Each run prints what the model was shown, each call with what the model got back, and what
//! only the application sees. The domain (the window service, the principals, the tools) is
//! `tool_examples::maintenance`, which `examples/mcp_server.rs` serves over MCP.

use tool_examples::maintenance::{
    LookupWindow, Principal, RestartService, Role, Windows, principal,
};
use tool_runtime::{
    Agent, Arguments, BoxError, Context, Model, OfflineModel, RunEvent, ScriptedModel, ScriptedTurn,
};

// ─── Choosing a model ───────────────────────────────────────────────────────────────────────

/// The model of acts 1 and 3: a real provider when one is configured in the environment
/// (`OPENAI_API_KEY`; `OPENAI_BASE_URL` for an OpenAI-compatible server such as Ollama, with
/// `OPENAI_MODEL`; or `ANTHROPIC_API_KEY`: see `tool_runtime::providers::from_env`), else the
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
    Ok(())
}
