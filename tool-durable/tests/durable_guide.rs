//! The guide's chapter `tool_durable::guide`, "The example, step by step", as a reader runs
//! it: the example's own `server` (the pinned Restate server the tests provision, named by
//! `DURABLE_RESTATE_SERVER` instead of `npx`, on free ports), then `worker`, `register`,
//! `start run-1`, `status run-1`, `approve run-1`, `output run-1`, `text run-1`, each the example's binary
//! with the chapter's arguments; then the chapter's three `curl` requests for `run-2` (start,
//! resolve the approval's awakeable, attach). The parked run's `status`/`resume` lines are run
//! by `durable_w7`.

mod support;

use std::net::SocketAddr;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail, ensure};
use serde_json::json;
use support::durable::{ANSWER, PATIENCE};
use support::worker::example_binary;
use support::{TempDir, free_ports, http, loopback, restate_server, tail};
use tool_durable::{DurableClient, RunEnd};

/// A command of the chapter left running in its terminal: its process group is killed when
/// dropped (the example's `server` runs the Restate server as a child of its own).
struct Terminal {
    child: Child,
    log: PathBuf,
}

impl Terminal {
    fn open(
        binary: &Path,
        args: &[&str],
        env: &[(String, String)],
        dir: &Path,
    ) -> anyhow::Result<Self> {
        let log = dir.join(format!("{}.log", args.join("-")));
        let file = std::fs::File::create(&log)?;
        let child = Command::new(binary)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .process_group(0)
            .spawn()
            .with_context(|| format!("run {} {args:?}", binary.display()))?;
        Ok(Terminal { child, log })
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.wait();
    }
}

/// Runs the example once with `args` (a command of the chapter) and returns what it printed;
/// fails when it fails.
fn run(binary: &Path, args: &[&str], env: &[(String, String)]) -> anyhow::Result<String> {
    let out = Command::new(binary)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("run {} {args:?}", binary.display()))?;
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    ensure!(
        out.status.success(),
        "durable {args:?} failed ({}): {printed}",
        out.status
    );
    Ok(printed)
}

/// Waits until `addr` answers `path` with a 2xx.
async fn answers(addr: SocketAddr, path: &str, what: &Terminal) -> anyhow::Result<()> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let short = Duration::from_secs(2);
        if http(addr, "GET", path, None, short)
            .await
            .is_ok_and(|r| r.is_success())
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "http://{addr}{path} did not answer; the log:\n{}",
                tail(&what.log(), 40)
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs `status` until it prints `phase`.
async fn status_until(
    binary: &Path,
    run_id: &str,
    phase: &str,
    env: &[(String, String)],
) -> anyhow::Result<String> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let printed = run(binary, &["status", run_id], env)?;
        if printed.contains(&format!(r#""phase": "{phase}""#)) {
            return Ok(printed);
        }
        if Instant::now() > deadline {
            bail!("{run_id} never reached {phase}: {printed}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_chapter_runs_as_written() -> anyhow::Result<()> {
    let binary = tokio::task::spawn_blocking(|| example_binary("durable")).await??;
    let restate = tokio::task::spawn_blocking(restate_server::binary)
        .await?
        .map_err(|message| anyhow!(message))?;
    let ports = free_ports(4)?;
    let (ingress, admin, fabric, worker) = (
        loopback(ports[0]),
        loopback(ports[1]),
        loopback(ports[2]),
        loopback(ports[3]),
    );
    let dir = TempDir::new("durable-guide")?;
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let env: Vec<(String, String)> = [
        (
            "DURABLE_RESTATE_SERVER",
            restate.to_string_lossy().into_owned(),
        ),
        ("RESTATE_DATA", path("restate-data")),
        ("RESTATE_INGRESS__BIND_ADDRESS", ingress.to_string()),
        ("RESTATE_ADMIN__BIND_ADDRESS", admin.to_string()),
        ("RESTATE_BIND_ADDRESS", fabric.to_string()),
        ("RESTATE_INGRESS", format!("http://{ingress}")),
        ("RESTATE_ADMIN", format!("http://{admin}")),
        ("DURABLE_WORKER", worker.to_string()),
        ("DURABLE_LEDGER", path("durable-ledger")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();

    // Terminal 1, terminal 2.
    let server = Terminal::open(&binary, &["server"], &env, dir.path())?;
    answers(admin, "/health", &server).await?;
    answers(ingress, "/restate/health", &server).await?;
    let worker_terminal = Terminal::open(&binary, &["worker"], &env, dir.path())?;
    let deadline = Instant::now() + PATIENCE;
    while tokio::net::TcpStream::connect(worker).await.is_err() {
        ensure!(
            Instant::now() < deadline,
            "the worker did not serve: {}",
            worker_terminal.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let registered = run(&binary, &["register"], &env)?;
    ensure!(
        registered.contains(&format!("registered http://{worker}")),
        "{registered}"
    );
    let started = run(&binary, &["start", "run-1"], &env)?;
    ensure!(started.contains("started run-1"), "{started}");
    let waiting = status_until(&binary, "run-1", "waiting", &env).await?;
    ensure!(
        waiting.contains("svc-42"),
        "the production restart waits: {waiting}"
    );
    let approved = run(&binary, &["approve", "run-1"], &env)?;
    ensure!(
        approved.contains("approve ") && approved.contains("svc-42"),
        "{approved}"
    );
    let output = run(&binary, &["output", "run-1"], &env)?;
    ensure!(output.contains(ANSWER), "output run-1 printed: {output}");
    // The model's text, as it streamed (W10): posted beside the journal, so it may land a
    // moment after the end.
    let deadline = Instant::now() + PATIENCE;
    let text = loop {
        let text = run(&binary, &["text", "run-1"], &env)?;
        if text.contains(&format!("turn 2 (attempt 1): {ANSWER}")) || Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    ensure!(
        text.contains(&format!("turn 2 (attempt 1): {ANSWER}")),
        "text run-1 printed: {text}"
    );
    // Decided before: the chapter's `approve` a second time says there is nothing to decide.
    let again = run(&binary, &["approve", "run-1"], &env);
    ensure!(
        again
            .as_ref()
            .is_err_and(|e| e.to_string().contains("waits for no decision")),
        "{again:?}"
    );

    // The same with `curl`: start run-2, resolve its approval's awakeable, attach.
    let body = json!({"input": "Restart svc-7 and svc-42.", "context": {"principal": "ada"}});
    let sent = http(
        ingress,
        "POST",
        "/AgentRun/run-2/run/send",
        Some(&body),
        PATIENCE,
    )
    .await?;
    ensure!(sent.is_success(), "{sent:?}");
    let client =
        DurableClient::new(format!("http://{ingress}")).with_admin(format!("http://{admin}"));
    let deadline = Instant::now() + PATIENCE;
    let awakeable = loop {
        let status = client.status("run-2").await?;
        if let Some(call) = status.pending.first() {
            break call.awakeable_id.clone();
        }
        ensure!(Instant::now() < deadline, "run-2 never waited: {status:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    ensure!(awakeable.starts_with("sign_"), "{awakeable}");
    let resolve = format!("/restate/awakeables/{awakeable}/resolve");
    let resolved = http(
        ingress,
        "POST",
        &resolve,
        Some(&json!({"decision": "approve"})),
        PATIENCE,
    )
    .await?;
    ensure!(resolved.is_success(), "{resolved:?}");
    let attached = http(
        ingress,
        "GET",
        "/restate/workflow/AgentRun/run-2/attach",
        None,
        PATIENCE,
    )
    .await?;
    ensure!(attached.is_success(), "{attached:?}");
    let end: RunEnd = serde_json::from_value(attached.json()).context("the run's end")?;
    match &end {
        RunEnd::Answer { text, .. } => ensure!(text == ANSWER, "{text}"),
        other => bail!("run-2 ended {other:?}"),
    }
    drop(worker_terminal);
    drop(server);
    Ok(())
}
