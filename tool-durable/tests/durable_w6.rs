//! W6: durable runs against a real Restate server that the test provisions (pinned, under
//! `target/peers/`), with the maintenance agent of `examples/durable.rs` as the worker. The
//! worker is killed with SIGKILL at each kind of step (after a tool step, in the middle of a
//! model stream, in the middle of a tool call, while an approval waits) and started again;
//! every run ends with the same answer as a run without a crash, and the side-effect ledger
//! holds each call's effect exactly once (W1, W2, W3). The run's usage and waiting calls are
//! read while it goes (W5), and the journal shows which steps it recorded.

mod support;

use std::future::Future;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use support::{RestateServer, TempDir, Worker, lines};
use tool_durable::{DecisionBody, DurableClient, Phase, RunEnd, RunRequest, RunStatus, Started};
use tool_runtime::{ErrorKind, RunOptions, UsageLimits};

/// How long a test waits for a run to reach a point.
const PATIENCE: Duration = Duration::from_secs(60);

/// The answer of the example's run, with or without a crash.
const ANSWER: &str = r#"Done. restart: {"service_id":"svc-7","state":"restarting"}; restart: {"service_id":"svc-42","state":"restarting"}"#;

/// A server, the example's worker and its ledger.
struct Durable {
    server: RestateServer,
    worker: Worker,
    ledger: TempDir,
    client: DurableClient,
}

impl Durable {
    /// A server and a worker with `env` (delays), registered.
    async fn start(env: &[(&str, &str)]) -> anyhow::Result<Self> {
        let server = RestateServer::start().await?;
        let ledger = TempDir::new("durable-ledger")?;
        let dir = ledger.path().to_str().context("a UTF-8 path")?.to_owned();
        let mut vars = vec![("DURABLE_LEDGER", dir.as_str())];
        vars.extend_from_slice(env);
        let worker = Worker::start("durable", &["worker"], &vars).await?;
        server.register(&worker.url()).await?;
        let client = DurableClient::new(server.ingress_url());
        Ok(Self {
            server,
            worker,
            ledger,
            client,
        })
    }

    async fn start_run(&self, run_id: &str) -> anyhow::Result<()> {
        let request = RunRequest::new("Restart svc-7 and svc-42.")
            .with_context(serde_json::json!({"principal": "ada"}));
        ensure!(self.client.start(run_id, &request).await? == Started::Now);
        Ok(())
    }

    /// Each handler start, as `key service` (without the worker's pid).
    fn attempts(&self) -> Vec<String> {
        lines(&self.ledger.path().join("attempts"))
            .iter()
            .map(|line| {
                line.rsplit_once(' ')
                    .map_or(line.as_str(), |(key, _)| key)
                    .to_owned()
            })
            .collect()
    }

    fn effects(&self) -> Vec<String> {
        lines(&self.ledger.path().join("effects"))
    }

    /// The steps of `run_id` that Restate's journal holds as done, by name, in order.
    async fn recorded(&self, run_id: &str) -> anyhow::Result<Vec<String>> {
        let rows = self
            .server
            .query(&format!(
                "SELECT j.index, j.entry_type, j.name FROM sys_journal j \
                 JOIN sys_invocation i ON j.id = i.id \
                 WHERE i.target_service_key = '{run_id}' AND i.target_handler_name = 'run' \
                 ORDER BY j.index"
            ))
            .await?;
        let mut last_run = None;
        let mut done = Vec::new();
        for row in rows {
            match row["entry_type"].as_str() {
                Some("Command: Run") => last_run = row["name"].as_str().map(str::to_owned),
                Some("Notification: Run") => done.extend(last_run.take()),
                _ => {}
            }
        }
        Ok(done)
    }

    /// Waits until the run waits for a decision, and answers its status.
    async fn waiting(&self, run_id: &str) -> anyhow::Result<RunStatus> {
        let found = eventually("the run waits for approval", || async {
            let status = self.client.status(run_id).await.ok()?;
            (status.phase == Phase::Waiting).then_some(status)
        })
        .await;
        found.with_context(|| format!("the worker's log:\n{}", self.worker.log()))
    }

    /// Approves every waiting call of the run, and answers its end.
    async fn approve_and_end(&self, run_id: &str) -> anyhow::Result<RunEnd> {
        let status = self.waiting(run_id).await?;
        self.approve(&status).await?;
        Ok(self.client.output(run_id).await?)
    }

    /// Approves the calls `status` lists as waiting: one call to Restate's ingress each, which
    /// needs no worker.
    async fn approve(&self, status: &RunStatus) -> anyhow::Result<()> {
        for call in &status.pending {
            self.client
                .decide(&call.awakeable_id, &DecisionBody::Approve)
                .await?;
        }
        Ok(())
    }

    /// The checks every run of these tests ends with: the answer of a run without a crash,
    /// and each call's effect once in the ledger, keyed by the call's idempotency key.
    fn check_end(&self, run_id: &str, end: &RunEnd) -> anyhow::Result<()> {
        let RunEnd::Answer { text, usage, .. } = end else {
            bail!("the run ended without an answer: {end:?}");
        };
        ensure!(text == ANSWER, "the answer: {text}");
        ensure!(
            (usage.input_tokens, usage.output_tokens) == (200, 40),
            "usage across restarts (L2, W5): {usage:?}"
        );
        let effects = self.effects();
        ensure!(
            effects
                == [
                    format!("{run_id}/1.0/c1 svc-7"),
                    format!("{run_id}/1.1/c2 svc-42")
                ],
            "each effect once: {effects:?}; attempts: {:?}",
            self.attempts()
        );
        Ok(())
    }
}

/// Polls `check` until it answers something, or fails after [`PATIENCE`].
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(found) = check().await {
            return Ok(found);
        }
        if Instant::now() > deadline {
            bail!("{what}: not within {PATIENCE:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w1_w3_w5_a_run_without_a_crash_journals_each_step_and_waits_as_an_awakeable()
-> anyhow::Result<()> {
    let durable = Durable::start(&[]).await?;
    durable.start_run("run-plain").await?;
    // W5: while it waits, its usage and its waiting call are read.
    let status = durable.waiting("run-plain").await?;
    ensure!(status.usage.input_tokens == 100, "{status:?}");
    let [pending] = status.pending.as_slice() else {
        bail!("one call waits: {status:?}");
    };
    ensure!(
        pending.call_id == "c2" && pending.tool == "restart",
        "{pending:?}"
    );
    ensure!(pending.arguments == serde_json::json!({"service_id": "svc-42"}));
    ensure!(
        pending
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("production"))
    );
    let end = durable.approve_and_end("run-plain").await?;
    durable.check_end("run-plain", &end)?;
    // W1: every model request and every call a step of its own, in order; the approved call
    // again at resume (its re-check and validation, H4).
    let recorded = durable.recorded("run-plain").await?;
    ensure!(
        recorded
            == [
                "discovery",
                "request 1",
                "call c1 restart",
                "call c2 restart",
                "call c2 restart",
                "request 2"
            ],
        "{recorded:?}"
    );
    ensure!(durable.attempts().len() == 2, "{:?}", durable.attempts());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w6_a_worker_killed_after_a_tool_step_runs_no_step_again() -> anyhow::Result<()> {
    // The second call's predicate asks for approval, so the run stops there: kill it once the
    // first call's step is recorded.
    let mut durable = Durable::start(&[("DURABLE_MODEL_DELAY_MS", "100")]).await?;
    durable.start_run("run-tool").await?;
    eventually("the first call's step is recorded", || async {
        let recorded = durable.recorded("run-tool").await.ok()?;
        recorded
            .iter()
            .any(|s| s == "call c1 restart")
            .then_some(())
    })
    .await?;
    durable.worker.kill_hard()?;
    durable.worker.restart().await?;
    let end = durable.approve_and_end("run-tool").await?;
    durable.check_end("run-tool", &end)?;
    // The first call ran once: its step was replayed, not run again.
    ensure!(
        durable.attempts() == ["run-tool/1.0/c1 svc-7", "run-tool/1.1/c2 svc-42"],
        "{:?}",
        durable.attempts()
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w6_a_worker_killed_in_the_middle_of_a_model_stream_requests_again() -> anyhow::Result<()> {
    // Each of the reply's events comes 300 ms after the one before: the first request takes
    // about two seconds.
    let mut durable = Durable::start(&[("DURABLE_MODEL_DELAY_MS", "300")]).await?;
    durable.start_run("run-stream").await?;
    eventually("discovery is recorded", || async {
        let recorded = durable.recorded("run-stream").await.ok()?;
        recorded.iter().any(|s| s == "discovery").then_some(())
    })
    .await?;
    // The request's stream has begun: it needs seven events, 300 ms apart.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let recorded = durable.recorded("run-stream").await?;
    ensure!(
        recorded == ["discovery"],
        "killed in the first request: {recorded:?}"
    );
    durable.worker.kill_hard()?;
    durable.worker.restart().await?;
    let end = durable.approve_and_end("run-stream").await?;
    durable.check_end("run-stream", &end)?;
    ensure!(durable.attempts().len() == 2, "{:?}", durable.attempts());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w2_w6_a_tool_cut_mid_way_runs_again_with_the_same_idempotency_key() -> anyhow::Result<()> {
    // The handler records its start, then takes two seconds before its effect.
    let mut durable = Durable::start(&[("DURABLE_TOOL_DELAY_MS", "2000")]).await?;
    durable.start_run("run-cut").await?;
    eventually("the first call started", || async {
        (!durable.attempts().is_empty()).then_some(())
    })
    .await?;
    ensure!(durable.effects().is_empty(), "killed before the effect");
    durable.worker.kill_hard()?;
    durable.worker.restart().await?;
    let end = durable.approve_and_end("run-cut").await?;
    durable.check_end("run-cut", &end)?;
    // The cut call ran again (at least once, W2), with the same key; its effect is once.
    let attempts = durable.attempts();
    ensure!(
        attempts
            == [
                "run-cut/1.0/c1 svc-7",
                "run-cut/1.0/c1 svc-7",
                "run-cut/1.1/c2 svc-42"
            ],
        "{attempts:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w3_w6_an_approval_decided_while_no_worker_runs_finishes_after_a_restart()
-> anyhow::Result<()> {
    let mut durable = Durable::start(&[]).await?;
    durable.start_run("run-wait").await?;
    let status = durable.waiting("run-wait").await?;
    durable.worker.kill_hard()?;
    // W5: with no worker, the engine still says where the run is and what waits.
    let seen = tool_durable::inspect(&durable.server.admin_url(), "run-wait").await?;
    ensure!(seen.status == status, "{seen:?}");
    ensure!(seen.invocation.is_some(), "{seen:?}");
    // No process holds the run: the decision is one call to Restate's ingress.
    durable.approve(&status).await?;
    durable.worker.restart().await?;
    let end = durable.client.output("run-wait").await?;
    durable.check_end("run-wait", &end)?;
    ensure!(durable.attempts().len() == 2, "{:?}", durable.attempts());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w5_usage_limits_count_across_restarts() -> anyhow::Result<()> {
    // One request allowed: the run's second request is refused after the restart, as it is
    // without one (L2), because the recorded request counts.
    let mut durable = Durable::start(&[]).await?;
    let request = RunRequest::new("Restart svc-7 and svc-42.")
        .with_context(serde_json::json!({"principal": "ada"}))
        .with_options(RunOptions::new().limits(UsageLimits::new().requests(1)));
    ensure!(durable.client.start("run-limit", &request).await? == Started::Now);
    let status = durable.waiting("run-limit").await?;
    durable.worker.kill_hard()?;
    durable.approve(&status).await?;
    durable.worker.restart().await?;
    let end = durable.client.output("run-limit").await?;
    let RunEnd::Failed { kind, usage, .. } = &end else {
        bail!("the limit ends the run: {end:?}");
    };
    ensure!(*kind == ErrorKind::UsageLimit, "{end:?}");
    ensure!(
        usage.input_tokens == 100,
        "the recorded request's usage: {usage:?}"
    );
    // The approved call ran before the limit ended the run, once.
    ensure!(durable.effects().len() == 2, "{:?}", durable.effects());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w5_a_run_that_keeps_failing_parks_and_resumes_when_an_operator_says_so()
-> anyhow::Result<()> {
    let outage = TempDir::new("durable-outage")?;
    let down = outage.path().join("down");
    std::fs::write(&down, "the provider is down")?;
    let down_env = down.to_str().context("a UTF-8 path")?.to_owned();
    let durable = Durable::start(&[("DURABLE_MODEL_DOWN", down_env.as_str())]).await?;
    durable.start_run("run-park").await?;
    // Every attempt fails at its first request; after its attempts the run is paused, not
    // failed, its journal kept; the engine says so, and why.
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
    let seen = tool_durable::inspect(&durable.server.admin_url(), "run-park").await?;
    ensure!(seen.invocation.as_deref() == Some("paused"), "{seen:?}");
    let recorded = durable.recorded("run-park").await?;
    ensure!(recorded == ["discovery"], "{recorded:?}");
    ensure!(durable.attempts().is_empty());
    // The provider is back; an operator resumes the run.
    std::fs::remove_file(&down)?;
    let resumed = durable
        .server
        .admin_request("PATCH", &format!("/invocations/{id}/resume"), None)
        .await?;
    ensure!(
        resumed.is_success(),
        "resume: {} {}",
        resumed.status,
        resumed.body
    );
    let end = durable.approve_and_end("run-park").await?;
    durable.check_end("run-park", &end)?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w3_a_run_cancelled_while_it_waits_ends_cancelled_and_runs_nothing_more()
-> anyhow::Result<()> {
    let durable = Durable::start(&[]).await?;
    durable.start_run("run-cancel").await?;
    durable.waiting("run-cancel").await?;
    let rows = durable
        .server
        .query(
            "SELECT id FROM sys_invocation \
             WHERE target_service_key = 'run-cancel' AND target_handler_name = 'run'",
        )
        .await?;
    let id = rows
        .first()
        .and_then(|row| row["id"].as_str())
        .context("the run's invocation")?
        .to_owned();
    let cancelled = durable
        .server
        .admin_request("PATCH", &format!("/invocations/{id}/cancel"), None)
        .await?;
    ensure!(
        cancelled.is_success(),
        "cancel: {} {}",
        cancelled.status,
        cancelled.body
    );
    let end = durable.client.output("run-cancel").await;
    ensure!(end.is_err(), "a cancelled run has no answer: {end:?}");
    // The approval-free call ran before the pause; the waiting one never ran, and no request
    // followed.
    ensure!(
        durable.effects() == ["run-cancel/1.0/c1 svc-7"],
        "{:?}",
        durable.effects()
    );
    let recorded = durable.recorded("run-cancel").await?;
    ensure!(!recorded.iter().any(|s| s == "request 2"), "{recorded:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w3_a_decision_that_does_not_fit_denies_its_call_alone_and_a_run_starts_once()
-> anyhow::Result<()> {
    let durable = Durable::start(&[]).await?;
    durable.start_run("run-unfit").await?;
    // The same run id again starts nothing: the first start's input stands.
    let again =
        RunRequest::new("Restart svc-1.").with_context(serde_json::json!({"principal": "ada"}));
    ensure!(durable.client.start("run-unfit", &again).await? == Started::Before);
    let status = durable.waiting("run-unfit").await?;
    for call in &status.pending {
        // A deferred call's result, for a call that waits for approval.
        let unfit = DecisionBody::Result {
            result: serde_json::json!({"restarted": true}),
        };
        durable.client.decide(&call.awakeable_id, &unfit).await?;
    }
    let end = durable.client.output("run-unfit").await?;
    let RunEnd::Answer { text, .. } = &end else {
        bail!("the run goes on to its answer: {end:?}");
    };
    ensure!(text.contains(tool_durable::UNFIT_DECISION), "{text}");
    ensure!(
        durable.effects() == ["run-unfit/1.0/c1 svc-7"],
        "only the approval-free call ran: {:?}",
        durable.effects()
    );
    Ok(())
}
