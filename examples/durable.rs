//! The maintenance agent as a durable run on Restate (W1–W5): `cargo run --example durable --
//! COMMAND`. A run restarts two services; the production one waits for approval as a Restate
//! awakeable, with no process holding the run, and is approved from another command. Kill the
//! worker at any point and start it again: the run goes on where its journal ends, and no
//! restart happens twice (the ledger shows each once).
//!
//! The guide's chapter `tool_durable::guide` walks through it:
//!
//! ```text
//! cargo run --example durable -- server            # a Restate server, its data in target/
//! cargo run --example durable -- worker            # serves the workflow on 127.0.0.1:9080
//! cargo run --example durable -- register          # tells the server where the worker is
//! cargo run --example durable -- start run-1       # starts a run, as the admin `ada`
//! cargo run --example durable -- status run-1      # its phase, usage, waiting calls; parked?
//! cargo run --example durable -- approve run-1     # approves every waiting call
//! cargo run --example durable -- output run-1      # waits for its end
//! cargo run --example durable -- text run-1        # the model's text so far, by turn
//! cargo run --example durable -- inspect run-1     # the engine's view: parked? why?
//! cargo run --example durable -- resume run-1      # resumes a parked run
//! ```
//!
//! `status`, `inspect`, `approve`, `deny` and `resume` read the engine's state through its
//! admin API: they answer with the worker stopped.
//!
//! `RESTATE_INGRESS` (default `http://127.0.0.1:8080`) and `RESTATE_ADMIN` (default
//! `http://127.0.0.1:9070`) say where the server is; `DURABLE_WORKER` (default
//! `127.0.0.1:9080`) where the worker serves; `DURABLE_LEDGER` (default `durable-ledger` in
//! the build's `target/`) where its side-effect ledger is; `RESTATE_DATA` (default
//! `restate-data` in the build's `target/`) where `server` keeps the engine's data;
//! `DURABLE_RESTATE_SERVER` a `restate-server` binary of your own for `server` to run instead
//! of the npm package (its ports then follow the server's own `RESTATE_INGRESS__BIND_ADDRESS`,
//! `RESTATE_ADMIN__BIND_ADDRESS` and `RESTATE_BIND_ADDRESS`);
//! `DURABLE_STEP_ATTEMPTS` (default `tool_durable::DEFAULT_STEP_ATTEMPTS`) how many attempts
//! one step gets before its run parks;
//! `DURABLE_MAX_STEP_BYTES` (default `tool_durable::DEFAULT_MAX_STEP_BYTES`) the largest step
//! result its journal takes; `DURABLE_MODEL_DOWN` a file whose presence makes the model fail
//! (an outage: with `DURABLE_STEP_ATTEMPTS=3` the run parks at once, `status` says so, and
//! `resume` goes on once the file is gone).

use std::path::PathBuf;
use std::process::ExitCode;

use tool_durable::{
    Decided, DecisionBody, DurableClient, Phase, RunEnd, RunRequest, Serving, Started,
};
use tool_examples::durable::{Ledger, workflow};
use tool_runtime::BoxError;

/// The Restate server `server` runs: the version the tests run against.
const RESTATE_SERVER: &str = "@restatedev/restate-server@1.7.12";

const USAGE: &str = "usage: durable server | worker | register | start RUN | status RUN | inspect RUN | approve RUN | deny RUN | resume RUN | output RUN | text RUN";

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

/// A number from the environment variable `name`, or `default`.
fn env_number<T: std::str::FromStr>(name: &str, default: T) -> Result<T, BoxError> {
    match std::env::var(name) {
        Ok(n) => n
            .parse()
            .map_err(|_| format!("{name} is not a number: {n:?}").into()),
        Err(_) => Ok(default),
    }
}

async fn run(args: &[&str]) -> Result<(), BoxError> {
    let client = DurableClient::new(env("RESTATE_INGRESS", "http://127.0.0.1:8080"))
        .with_admin(env("RESTATE_ADMIN", "http://127.0.0.1:9070"));
    match args {
        ["server"] => server()?,
        ["worker"] => worker().await?,
        ["register"] => {
            let admin = env("RESTATE_ADMIN", "http://127.0.0.1:9070");
            let worker = format!("http://{}", env("DURABLE_WORKER", "127.0.0.1:9080"));
            tool_durable::register(&admin, &worker).await?;
            println!("registered {worker} with {admin}");
        }
        ["start", run_id] => {
            let request = RunRequest::new("Restart svc-7 and svc-42.")
                .with_context(serde_json::json!({"principal": "ada"}));
            if client.start(run_id, &request).await? == Started::Before {
                return Err(format!("{run_id} was started before: choose another run id").into());
            }
            println!("started {run_id}");
        }
        ["status", run_id] => status(&client, run_id).await?,
        [verb @ ("approve" | "deny"), run_id] => decide_all(&client, verb, run_id).await?,
        ["inspect", run_id] => inspect(&client, run_id).await?,
        ["resume", run_id] => {
            let invocation = client.resume(run_id).await?;
            println!("resumed {run_id} ({invocation})");
        }
        ["output", run_id] => output(&client, run_id).await?,
        ["text", run_id] => text(&client, run_id).await?,
        _ => return Err(USAGE.into()),
    }
    Ok(())
}

/// The path in the environment variable `name`, else `default` in the `target/` directory
/// this example was built in: nothing it writes lands in the current directory.
fn path_or_target(name: &str, default: &str) -> Result<PathBuf, BoxError> {
    if let Some(path) = std::env::var_os(name) {
        return Ok(PathBuf::from(path));
    }
    // target/<profile>/examples/durable
    let exe = std::env::current_exe()?;
    let target = exe.ancestors().nth(3).ok_or_else(|| {
        format!(
            "{} is not in a cargo target directory: set {name}",
            exe.display()
        )
    })?;
    Ok(target.join(default))
}

/// The settings `server` gives the Restate server, for one machine and a person watching: no
/// usage reports sent to the vendor; a run that waits (an approval, a step's retry) is
/// suspended after 1 s without progress rather than 1 min, so a retried step and a restarted
/// worker are seen at once; a small footprint (two partitions, RocksDB 256 MiB). The tests'
/// server runs with the same (`tool-durable/tests/support/restate_server.rs`). An environment
/// variable of the same name set by the user wins.
const SERVER_SETTINGS: &[(&str, &str)] = &[
    ("RESTATE_DISABLE_TELEMETRY", "true"),
    ("RESTATE_WORKER__INVOKER__INACTIVITY_TIMEOUT", "1s"),
    ("RESTATE_WORKER__INVOKER__ABORT_TIMEOUT", "10s"),
    ("RESTATE_DEFAULT_NUM_PARTITIONS", "2"),
    ("RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE", "256MiB"),
];

/// Runs a Restate server in the foreground (through `npx`, which installs the pinned package
/// on first use, or the binary `DURABLE_RESTATE_SERVER` names), its data under `target/`,
/// ingress on 8080 and admin on 9070 unless the server's own settings say otherwise, with
/// [`SERVER_SETTINGS`], until Ctrl-C.
fn server() -> Result<(), BoxError> {
    let data = path_or_target("RESTATE_DATA", "restate-data")?;
    let own = std::env::var_os("DURABLE_RESTATE_SERVER").map(PathBuf::from);
    let described = match &own {
        Some(binary) => binary.display().to_string(),
        None => RESTATE_SERVER.to_owned(),
    };
    println!(
        "starting {described} with its data in {} (ingress {}, admin {})",
        data.display(),
        env("RESTATE_INGRESS__BIND_ADDRESS", ":8080"),
        env("RESTATE_ADMIN__BIND_ADDRESS", ":9070"),
    );
    let mut command = match &own {
        Some(binary) => std::process::Command::new(binary),
        None => {
            let mut npx = std::process::Command::new("npx");
            npx.args(["--yes", RESTATE_SERVER]);
            npx
        }
    };
    command.args(["--no-logo", "--base-dir"]).arg(&data);
    for (name, value) in SERVER_SETTINGS {
        if std::env::var_os(name).is_none() {
            command.env(name, value);
        }
    }
    let status = command.status().map_err(|e| match &own {
        Some(binary) => format!("cannot run {} ({e})", binary.display()),
        None => format!(
            "cannot run npx ({e}): the Restate server comes as the npm package \
             {RESTATE_SERVER}; install Node.js and npm, or name a restate-server of your own \
             in DURABLE_RESTATE_SERVER"
        ),
    })?;
    if !status.success() {
        return Err(format!("the Restate server stopped: {status}").into());
    }
    Ok(())
}

/// The run's status, and whether the engine parked it (with the failure and the command that
/// goes on).
async fn status(client: &DurableClient, run_id: &str) -> Result<(), BoxError> {
    let seen = client.inspect(run_id).await?;
    println!("{}", serde_json::to_string_pretty(&seen.status)?);
    if seen.is_parked() {
        let step = seen
            .last_failure
            .as_ref()
            .and_then(|failure| failure.step.as_deref())
            .unwrap_or("a step");
        println!("parked: {step} failed every attempt its budget gives it");
        if let Some(failure) = &seen.last_failure {
            println!("last failure: {}", serde_json::to_string(failure)?);
        }
        println!(
            "starting a worker does not go on with it; once the cause is gone: \
             cargo run --example durable -- resume {run_id}"
        );
    }
    Ok(())
}

/// Waits for the run's end and prints it, saying first that it waits (the engine's backoff
/// after restarts can take a while).
async fn output(client: &DurableClient, run_id: &str) -> Result<(), BoxError> {
    eprintln!(
        "waiting for the end of {run_id} (at most {} s; `status {run_id}` says where it is)",
        tool_durable::DEFAULT_WAIT.as_secs()
    );
    match client.output(run_id).await? {
        RunEnd::Answer { text, usage, .. } => println!(
            "{text}\n(usage: {} in, {} out)",
            usage.input_tokens, usage.output_tokens
        ),
        other => println!("{}", serde_json::to_string_pretty(&other)?),
    }
    Ok(())
}

/// Prints the model's text of `run_id` so far, each turn's from its latest attempt, and how
/// many attempts streamed it.
async fn text(client: &DurableClient, run_id: &str) -> Result<(), BoxError> {
    let deltas = client.text(run_id, 0).await?;
    for (turn, text) in deltas.text() {
        let attempts = deltas
            .deltas
            .iter()
            .filter(|d| d.turn == turn)
            .map(|d| d.attempt)
            .max()
            .unwrap_or(1);
        println!("turn {turn} (attempt {attempts}): {text}");
    }
    if deltas.deltas.is_empty() {
        println!("no text yet for {run_id}");
    }
    Ok(())
}

/// Serves the workflow until Ctrl-C.
async fn worker() -> Result<(), BoxError> {
    let ledger = Ledger::open(path_or_target("DURABLE_LEDGER", "durable-ledger")?)?;
    // `PORT`, as a platform that starts workers gives it, else `DURABLE_WORKER`.
    let address = match std::env::var("PORT") {
        Ok(port) => format!("127.0.0.1:{port}"),
        Err(_) => env("DURABLE_WORKER", "127.0.0.1:9080"),
    };
    let listener = tokio::net::TcpListener::bind(&address).await?;
    // The attempts one step gets before its run parks (W7), and the largest step result the
    // journal takes (W10).
    let attempts = env_number("DURABLE_STEP_ATTEMPTS", tool_durable::DEFAULT_STEP_ATTEMPTS)?;
    let max_step = env_number(
        "DURABLE_MAX_STEP_BYTES",
        tool_durable::DEFAULT_MAX_STEP_BYTES,
    )?;
    println!("worker serving the AgentRun workflow on http://{address}");
    // The model's text goes to the ingress as it streams, for `text` to read (W10).
    let ingress = env("RESTATE_INGRESS", "http://127.0.0.1:8080");
    let workflow = workflow(ledger)?.max_step_bytes(max_step).text_to(&ingress);
    Serving::new(workflow)
        .step_attempts(attempts)
        .serve(listener, tokio::signal::ctrl_c())
        .await;
    Ok(())
}

/// Approves (or denies) every waiting call of `run_id`, saying which were decided before.
async fn decide_all(client: &DurableClient, verb: &str, run_id: &str) -> Result<(), BoxError> {
    let status = client.status(run_id).await?;
    if status.phase != Phase::Waiting || status.pending.is_empty() {
        return Err(format!("{run_id} waits for no decision ({:?})", status.phase).into());
    }
    let decision = if verb == "approve" {
        DecisionBody::Approve
    } else {
        DecisionBody::Deny { message: None }
    };
    for call in &status.pending {
        match client.decide(run_id, &call.call_id, &decision).await? {
            Decided::Now => println!("{verb} {} {}: {}", call.call_id, call.tool, call.arguments),
            Decided::Before { first } => println!(
                "{} was decided before: {}",
                call.call_id,
                serde_json::to_string(&first)?
            ),
        }
    }
    Ok(())
}

/// What the engine holds of `run_id`: its invocation, why it last failed, its status.
async fn inspect(client: &DurableClient, run_id: &str) -> Result<(), BoxError> {
    let seen = client.inspect(run_id).await?;
    println!(
        "invocation {} ({})",
        seen.invocation_id.as_deref().unwrap_or("none"),
        seen.invocation.as_deref().unwrap_or("not started")
    );
    if let Some(failure) = &seen.last_failure {
        println!("last failure: {}", serde_json::to_string(failure)?);
    }
    println!("{}", serde_json::to_string_pretty(&seen.status)?);
    Ok(())
}
