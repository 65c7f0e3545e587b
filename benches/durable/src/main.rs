//! The cost of a durable step: a durable run of tool-durable (`AgentRun`: discovery, two model
//! requests and `CALLS` tool calls, each a journaled step, with the run's state writes)
//! beside a workflow of Restate's SDK that takes the same number of bare `ctx.run` steps, on
//! the same Restate server and worker, run after run in turn. Also the same agent's run in
//! one process with no journal, to show what the journal costs against the run's own work.
//!
//! `durable-bench [--runs N] [--calls K] [--out FILE]`. The server is `$RESTATE_SERVER`, else
//! the one the tests installed under the workspace's `target/peers/` (`benches/run.sh`
//! installs it with npm when it is missing). Figures are medians of wall time per run, and
//! ratios of the two in the same run.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::pin::Pin;
use std::process::{Child, Command, Stdio};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use restate_sdk::prelude::*;
use serde_json::{Value, json};
use tool_durable::{AgentRun, RunEnd, RunRequest};
use tool_runtime::{
    Agent, BoxError, Context, FinishReason, Model, ModelError, ModelEvent, ModelRequest,
    ModelStream, Schema, Tool, Usage,
};

/// A workflow of bare `ctx.run` steps, each recording a value the size of a call's outcome.
struct Bare;

#[restate_sdk::workflow]
impl Bare {
    #[handler]
    async fn run(
        &self,
        ctx: WorkflowContext<'_>,
        steps: Json<u32>,
    ) -> Result<Json<u32>, HandlerError> {
        let Json(steps) = steps;
        for step in 0..steps {
            let Json(_recorded): Json<Value> = ctx
                .run(move || async move {
                    Ok(Json(
                        json!({"kind": "success", "text": format!("\"ok {step}\"")}),
                    ))
                })
                .name(format!("step {step}"))
                .await?;
        }
        Ok(Json(steps))
    }
}

/// The input of the benchmark's tool.
#[derive(Schema)]
struct Noop {
    /// A number.
    n: u32,
}

/// A model that calls `noop` `calls` times in one turn, then answers: from the conversation
/// alone, as a provider does.
struct Calls(usize);

impl Model for Calls {
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let answered = request.messages.iter().any(|m| m.tool_result().is_some());
        let mut events = Vec::new();
        if answered {
            events.push(ModelEvent::TextDelta("done".to_owned()));
            events.push(ModelEvent::Finish(FinishReason::Stop));
        } else {
            for index in 0..self.0 {
                events.push(ModelEvent::ToolCallStart {
                    index,
                    id: format!("c{index}"),
                    name: "noop".to_owned(),
                });
                events.push(ModelEvent::ToolCallArguments {
                    index,
                    fragment: format!(r#"{{"n":{index}}}"#),
                });
            }
            events.push(ModelEvent::Finish(FinishReason::ToolCalls));
        }
        events.push(ModelEvent::Usage(Usage::new(10, 5)));
        Box::pin(Events(events.into_iter()))
    }
}

struct Events(std::vec::IntoIter<ModelEvent>);

impl futures_core::Stream for Events {
    type Item = Result<ModelEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(self.0.next().map(Ok))
    }
}

fn agent(calls: usize) -> Result<Agent, BoxError> {
    let noop = Tool::builder("noop", "Does nothing.")
        .handler(|_ctx: Context, input: Noop| async move {
            Ok::<_, std::io::Error>(format!("ok {}", input.n))
        })
        .build();
    Ok(Agent::builder(Calls(calls))
        .tool(noop)
        .max_concurrency(1)
        .build()?)
}

struct Options {
    runs: usize,
    calls: usize,
    out: Option<PathBuf>,
}

fn options() -> Result<Options, BoxError> {
    let mut options = Options {
        runs: 30,
        calls: 10,
        out: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} takes a value"));
        match arg.as_str() {
            "--runs" => options.runs = value()?.parse()?,
            "--calls" => options.calls = value()?.parse()?,
            "--out" => options.out = Some(value()?.into()),
            _ => {
                return Err(format!(
                    "usage: durable-bench [--runs N] [--calls K] [--out FILE]; not {arg}"
                )
                .into());
            }
        }
    }
    Ok(options)
}

fn free_port() -> Result<u16, BoxError> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn server_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("RESTATE_SERVER") {
        return path.into();
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/peers/restate-server-1.7.12/node_modules/@restatedev/restate-server-linux-x64/bin/restate-server")
}

struct Server {
    child: Child,
    dir: PathBuf,
    ingress: String,
    admin: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn start_server() -> Result<Server, BoxError> {
    let binary = server_binary();
    if !binary.is_file() {
        return Err(format!(
            "no Restate server at {}: run `cargo test -p tool-durable` once (it installs it), or set RESTATE_SERVER",
            binary.display()
        )
        .into());
    }
    let dir = std::env::temp_dir().join(format!("durable-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (ingress, admin, node) = (free_port()?, free_port()?, free_port()?);
    let child = Command::new(binary)
        .args(["--no-logo", "--listen-mode", "tcp", "--node-name", "bench"])
        .arg("--base-dir")
        .arg(dir.join("data"))
        .env(
            "RESTATE_INGRESS__BIND_ADDRESS",
            format!("127.0.0.1:{ingress}"),
        )
        .env("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{admin}"))
        .env("RESTATE_BIND_ADDRESS", format!("127.0.0.1:{node}"))
        .env("RESTATE_DEFAULT_NUM_PARTITIONS", "2")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("server.log"))?)
        .stderr(Stdio::null())
        .spawn()?;
    let server = Server {
        child,
        dir,
        ingress: format!("http://127.0.0.1:{ingress}"),
        admin: format!("http://127.0.0.1:{admin}"),
    };
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ready = http.get(format!("{}/health", server.admin)).send().await;
        if ready.is_ok_and(|r| r.status().is_success()) {
            return Ok(server);
        }
        if Instant::now() > deadline {
            return Err("the Restate server did not become ready in 60 s".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let Options { runs, calls, out } = options()?;
    let server = start_server().await?;
    let worker = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let worker_addr: SocketAddr = worker.local_addr()?;
    let endpoint = restate_sdk::endpoint::Endpoint::builder()
        .bind(Bare)
        .bind(AgentRun::new(agent(calls)?))
        .build();
    tokio::spawn(restate_sdk::http_server::HttpServer::new(endpoint).serve(worker));
    tool_durable::register(&server.admin, &format!("http://{worker_addr}")).await?;

    let http = reqwest::Client::new();
    let steps = u32::try_from(calls + 3)?;
    let (mut bare, mut ours, mut local) = (Vec::new(), Vec::new(), Vec::new());
    let plain = agent(calls)?;
    // One of each first, not measured: connections, caches.
    for round in 0..=runs {
        let started = Instant::now();
        let answer = http
            .post(format!("{}/Bare/bare-{round}/run", server.ingress))
            .json(&steps)
            .send()
            .await?;
        let taken = started.elapsed();
        if !answer.status().is_success() {
            return Err(format!("Bare: {}", answer.text().await?).into());
        }
        let request = RunRequest::new("go");
        let started = Instant::now();
        let answer = http
            .post(format!("{}/AgentRun/ours-{round}/run", server.ingress))
            .json(&request)
            .send()
            .await?;
        let taken_ours = started.elapsed();
        let end: RunEnd = answer.json().await?;
        if !matches!(&end, RunEnd::Answer { text, .. } if text == "done") {
            return Err(format!("AgentRun: {end:?}").into());
        }
        let started = Instant::now();
        plain.run(&Context::new(), "go").await?;
        let taken_local = started.elapsed();
        if round > 0 {
            bare.push(taken);
            ours.push(taken_ours);
            local.push(taken_local);
        }
    }
    let (bare, ours, local) = (median(bare), median(ours), median(local));
    let per_step = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(steps);
    let ratio = ours.as_secs_f64() / bare.as_secs_f64();
    let summary = json!({
        "runs": runs,
        "calls_per_run": calls,
        "steps_per_run": steps,
        "bare_ctx_run_us_per_run": bare.as_secs_f64() * 1e6,
        "durable_agent_us_per_run": ours.as_secs_f64() * 1e6,
        "in_process_agent_us_per_run": local.as_secs_f64() * 1e6,
        "bare_us_per_step": per_step(bare),
        "durable_us_per_step": per_step(ours),
        "durable_over_bare": ratio,
        "journal_share": 1.0 - local.as_secs_f64() / ours.as_secs_f64(),
    });
    println!(
        "a durable run of {calls} calls ({steps} steps): {:.0} µs per step, {ratio:.2}× a bare \
         ctx.run's {:.0} µs (median of {runs} runs each, in turn); the same run in one process \
         with no journal: {:.0} µs in all",
        per_step(ours),
        per_step(bare),
        local.as_secs_f64() * 1e6,
    );
    if let Some(out) = out {
        std::fs::write(out, serde_json::to_vec_pretty(&summary)?)?;
    }
    drop(server);
    Ok(())
}
