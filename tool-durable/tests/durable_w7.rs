//! W7: a run that makes progress never parks. Against a real Restate server that the test
//! provisions (pinned, under `target/peers/`), the durable example's worker is killed with
//! SIGKILL right after each new step of a long run starts, down a second each time: the run
//! finishes with no operator action, each effect once. A step that always fails parks its
//! run after the step's budget (W5); the client finds it, says why with no worker running,
//! and resumes it (W8).
//!
//! `DURABLE_SOAK=1` makes the kill test a soak: more runs, each killed after every new step at
//! a varying point of it.

mod support;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use support::TempDir;
use support::durable::{Durable, eventually};
use tool_durable::{ClientError, FailureKind, Phase, RunEnd, RunRequest, Started};

/// The services the long run restarts, one a turn: 15 calls and 16 model requests, 32 steps
/// with the discovery.
const SERVICES: usize = 15;

/// How long the worker stays down after each kill.
const DOWN: Duration = Duration::from_secs(1);

/// How long one run may take, kills included.
const RUN_WITHIN: Duration = Duration::from_secs(600);

fn long_request() -> RunRequest {
    let services: Vec<String> = (1..=SERVICES).map(|i| format!("svc-k{i}")).collect();
    RunRequest::new(format!("Restart {}, one at a time.", services.join(" ")))
        .with_context(serde_json::json!({"principal": "ada"}))
}

/// The answer of the long run, as a run without a kill gives it.
fn long_answer() -> String {
    let results: Vec<String> = (1..=SERVICES)
        .map(|i| format!(r#"restart: {{"service_id":"svc-k{i}","state":"restarting"}}"#))
        .collect();
    format!("Done. {}", results.join("; "))
}

/// What one killed run measured.
struct Figures {
    kills: usize,
    handler_starts: usize,
    requests: usize,
    took: Duration,
}

/// The steps that have started since the ledger held `before` (its counts of calls and
/// requests), each once: the model's requests by turn, the calls by key.
fn started_steps(durable: &Durable, before: (usize, usize)) -> HashSet<String> {
    durable
        .requests()
        .into_iter()
        .skip(before.1)
        .chain(durable.attempts().into_iter().skip(before.0))
        .collect()
}

/// Whether Restate parked the run `run_id`.
async fn parked(durable: &Durable, run_id: &str) -> anyhow::Result<bool> {
    let rows = durable
        .server
        .query(&format!(
            "SELECT status FROM sys_invocation \
             WHERE target_service_key = '{run_id}' AND target_handler_name = 'run'"
        ))
        .await?;
    Ok(rows.first().is_some_and(|row| row["status"] == "paused"))
}

/// Runs the long run `run_id`, killing the worker after each new step starts (`jitter` more
/// for the `n`th kill), until the run ends; fails as soon as the run is parked.
async fn killed_run(
    durable: &mut Durable,
    run_id: &str,
    jitter: impl Fn(usize) -> Duration,
) -> anyhow::Result<(RunEnd, Figures)> {
    let before = (durable.attempts().len(), durable.requests().len());
    let started = Instant::now();
    ensure!(durable.client.start(run_id, &long_request()).await? == Started::Now);
    let mut seen = started_steps(durable, before).len();
    let mut kills = 0;
    let output = loop {
        if let Some(output) = durable.server.workflow_output("AgentRun", run_id).await? {
            break output;
        }
        if parked(durable, run_id).await? {
            bail!("W7: the run was parked after {kills} kills, making progress");
        }
        if started.elapsed() > RUN_WITHIN {
            bail!("the run did not end within {RUN_WITHIN:?} ({kills} kills)");
        }
        let steps = started_steps(durable, before).len();
        if steps > seen {
            seen = steps;
            tokio::time::sleep(jitter(kills)).await;
            durable.worker.kill_hard()?;
            kills += 1;
            tokio::time::sleep(DOWN).await;
            durable.worker.restart().await?;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let (status, body) = output;
    ensure!(status == 200, "the run's output: {status} {body}");
    let end: RunEnd = serde_json::from_value(body)?;
    let figures = Figures {
        kills,
        handler_starts: durable.attempts().len() - before.0,
        requests: durable.requests().len() - before.1,
        took: started.elapsed(),
    };
    Ok((end, figures))
}

/// The checks of a killed run's end: the answer of a run without a kill, and each call's
/// effect once, keyed by its call.
fn check_long_end(durable: &Durable, run_id: &str, end: &RunEnd) -> anyhow::Result<()> {
    let RunEnd::Answer { text, usage, .. } = end else {
        bail!("the run ended without an answer: {end:?}");
    };
    ensure!(*text == long_answer(), "the answer: {text}");
    let requests = u64::try_from(SERVICES + 1)?;
    ensure!(
        (usage.input_tokens, usage.output_tokens) == (100 * requests, 20 * requests),
        "usage across restarts: {usage:?}"
    );
    let effects: Vec<String> = durable
        .effects()
        .into_iter()
        .filter(|e| e.starts_with(&format!("{run_id}/")))
        .collect();
    let expected: Vec<String> = (1..=SERVICES)
        .map(|i| format!("{run_id}/{i}.0/c{i} svc-k{i}"))
        .collect();
    ensure!(
        effects == expected,
        "each effect once, in order: {effects:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w7_a_run_killed_after_each_new_step_finishes_with_each_effect_once() -> anyhow::Result<()>
{
    let soak = std::env::var_os("DURABLE_SOAK").is_some();
    let runs = if soak { 5 } else { 1 };
    // Each model event 50 ms apart, each call 200 ms long: every kill lands inside a step.
    let mut durable = Durable::start(&[
        ("DURABLE_MODEL_DELAY_MS", "50"),
        ("DURABLE_TOOL_DELAY_MS", "200"),
    ])
    .await?;
    for run in 0..runs {
        let run_id = format!("run-kill-{run}");
        // The soak kills at a varying point of each step: 0 to 240 ms after its start.
        let jitter = |kill: usize| {
            let ms = if soak {
                (kill * 7 + run * 13) % 5 * 60
            } else {
                0
            };
            Duration::from_millis(u64::try_from(ms).unwrap_or_default())
        };
        let (end, figures) = killed_run(&mut durable, &run_id, jitter).await?;
        check_long_end(&durable, &run_id, &end)?;
        eprintln!(
            "W7 {run_id}: {} kills, {} handler starts for {SERVICES} effects ({:.2} a call), \
             {} model requests for {} turns, finished in {:.1?} with no operator action",
            figures.kills,
            figures.handler_starts,
            figures.handler_starts as f64 / SERVICES as f64,
            figures.requests,
            SERVICES + 1,
            figures.took
        );
        ensure!(
            figures.kills >= 30,
            "at least 30 kills in the run: {}",
            figures.kills
        );
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w5_w7_a_step_that_always_fails_parks_after_its_budget_and_resumes() -> anyhow::Result<()> {
    let outage = TempDir::new("durable-outage")?;
    let down = outage.path().join("down");
    std::fs::write(&down, "the provider is down")?;
    let down_env = down.to_str().context("a UTF-8 path")?.to_owned();
    let mut durable = Durable::start(&[
        ("DURABLE_MODEL_DOWN", down_env.as_str()),
        ("DURABLE_STEP_ATTEMPTS", "3"),
    ])
    .await?;
    durable.start_run("run-park").await?;
    // Every attempt fails at its first request: after the step's three attempts the run is
    // paused, not failed, its journal kept; the engine says so.
    let id = eventually("the run is parked", || async {
        let rows = durable
            .server
            .query(
                "SELECT id, status FROM sys_invocation \
                 WHERE target_service_key = 'run-park' AND target_handler_name = 'run'",
            )
            .await
            .ok()?;
        let row = rows.first()?;
        (row["status"] == "paused").then(|| row["id"].as_str().map(str::to_owned))?
    })
    .await?;
    ensure!(
        durable.requests() == ["request 1", "request 1", "request 1"],
        "W7: the step's budget, three attempts: {:?}",
        durable.requests()
    );
    let recorded = durable.recorded("run-park").await?;
    ensure!(recorded == ["discovery"], "{recorded:?}");
    ensure!(durable.attempts().is_empty());
    // W8: with no worker running, the client finds the parked run, its invocation and why.
    durable.worker.kill_hard()?;
    let seen = durable.client.inspect("run-park").await?;
    ensure!(seen.invocation.as_deref() == Some("paused"), "{seen:?}");
    ensure!(
        seen.invocation_id.as_deref() == Some(id.as_str()),
        "{seen:?}"
    );
    let failure = seen
        .last_failure
        .clone()
        .context("the failure that parked the run")?;
    ensure!(
        failure.kind == FailureKind::Step && failure.step.as_deref() == Some("request 1"),
        "{failure:?}"
    );
    // What failed, never its cause: the provider's error stays in the worker's log (W4).
    ensure!(
        failure.message.contains("the provider failed") && !failure.message.contains("outage"),
        "{failure:?}"
    );
    ensure!(seen.status.phase == Phase::Running, "{seen:?}");
    // The example's own `status`, as an operator types it, says the same with the worker down.
    let (ingress, admin) = (durable.server.ingress_url(), durable.server.admin_url());
    let urls = [
        ("RESTATE_INGRESS", ingress.as_str()),
        ("RESTATE_ADMIN", admin.as_str()),
    ];
    let status = durable.worker.run_command(&["status", "run-park"], &urls)?;
    ensure!(
        status.contains("parked: request 1 failed every attempt")
            && status.contains("-- resume run-park"),
        "{status}"
    );
    // The provider is back; an operator resumes the run with the example's command, and the
    // run gets a fresh budget.
    std::fs::remove_file(&down)?;
    durable.worker.restart().await?;
    let resumed = durable.worker.run_command(&["resume", "run-park"], &urls)?;
    ensure!(
        resumed.contains(&format!("resumed run-park ({id})")),
        "{resumed}"
    );
    let end = durable.approve_and_end("run-park").await?;
    durable.check_end("run-park", &end)?;
    // A run that is not parked has nothing to resume.
    let again = durable.client.resume("run-park").await;
    ensure!(
        matches!(again, Err(ClientError::NotParked { .. })),
        "{again:?}"
    );
    Ok(())
}
