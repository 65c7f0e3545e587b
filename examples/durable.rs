//! The maintenance agent as a durable run on Restate (W1–W5): `cargo run --example durable --
//! COMMAND`. A run restarts two services; the production one waits for approval as a Restate
//! awakeable, with no process holding the run, and is approved from another command. Kill the
//! worker at any point and start it again: the run goes on where its journal ends, and no
//! restart happens twice (the ledger shows each once).
//!
//! With a Restate server running (README: "Durable runs on Restate"):
//!
//! ```text
//! cargo run --example durable -- worker            # serves the workflow on 127.0.0.1:9080
//! cargo run --example durable -- register          # tells the server where the worker is
//! cargo run --example durable -- start run-1       # starts a run, as the admin `ada`
//! cargo run --example durable -- status run-1      # its phase, usage and waiting calls
//! cargo run --example durable -- approve run-1     # approves every waiting call
//! cargo run --example durable -- output run-1      # waits for its end
//! ```
//!
//! `RESTATE_INGRESS` (default `http://127.0.0.1:8080`) and `RESTATE_ADMIN` (default
//! `http://127.0.0.1:9070`) say where the server is; `DURABLE_WORKER` (default
//! `127.0.0.1:9080`) where the worker serves; `DURABLE_LEDGER` (default
//! `target/durable-ledger`) where its side-effect ledger is.

use std::process::ExitCode;

use tool_durable::{DecisionBody, DurableClient, Phase, RunEnd, RunRequest, Started};
use tool_examples::durable::{Ledger, workflow};
use tool_runtime::BoxError;

const USAGE: &str = "usage: durable worker | register | start RUN | status RUN | approve RUN | deny RUN | output RUN";

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match run(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(if e.to_string().starts_with("usage:") {
                2
            } else {
                1
            })
        }
    }
}

fn env(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

async fn run(args: &[&str]) -> Result<(), BoxError> {
    let client = DurableClient::new(env("RESTATE_INGRESS", "http://127.0.0.1:8080"));
    match args {
        ["worker"] => {
            let ledger = Ledger::open(env("DURABLE_LEDGER", "target/durable-ledger"))?;
            // `PORT`, as a platform that starts workers gives it, else `DURABLE_WORKER`.
            let address = match std::env::var("PORT") {
                Ok(port) => format!("127.0.0.1:{port}"),
                Err(_) => env("DURABLE_WORKER", "127.0.0.1:9080"),
            };
            let listener = tokio::net::TcpListener::bind(&address).await?;
            println!("worker serving the AgentRun workflow on http://{address}");
            tool_durable::serve(workflow(ledger)?, listener, tokio::signal::ctrl_c()).await;
        }
        ["register"] => {
            let admin = env("RESTATE_ADMIN", "http://127.0.0.1:9070");
            let worker = format!("http://{}", env("DURABLE_WORKER", "127.0.0.1:9080"));
            tool_durable::register(&admin, &worker).await?;
            println!("registered {worker} with {admin}");
        }
        ["start", run_id] => {
            let request = RunRequest::new("Restart svc-7 and svc-42.")
                .with_context(serde_json::json!({"principal": "ada"}));
            match client.start(run_id, &request).await? {
                Started::Now => println!("started {run_id}"),
                Started::Before => {
                    return Err(
                        format!("{run_id} was started before: choose another run id").into(),
                    );
                }
            }
        }
        ["status", run_id] => {
            let status = client.status(run_id).await?;
            println!("{}", serde_json::to_string_pretty(&status)?);
        }
        ["approve" | "deny", run_id] => {
            let status = client.status(run_id).await?;
            if status.phase != Phase::Waiting || status.pending.is_empty() {
                return Err(format!("{run_id} waits for no decision ({:?})", status.phase).into());
            }
            let decision = if args[0] == "approve" {
                DecisionBody::Approve
            } else {
                DecisionBody::Deny { message: None }
            };
            for call in &status.pending {
                client.decide(&call.awakeable_id, &decision).await?;
                println!(
                    "{} {} {}: {}",
                    args[0], call.call_id, call.tool, call.arguments
                );
            }
        }
        ["output", run_id] => match client.output(run_id).await? {
            RunEnd::Answer { text, usage, .. } => {
                println!(
                    "{text}\n(usage: {} in, {} out)",
                    usage.input_tokens, usage.output_tokens
                );
            }
            other => println!("{}", serde_json::to_string_pretty(&other)?),
        },
        _ => return Err(USAGE.into()),
    }
    Ok(())
}
