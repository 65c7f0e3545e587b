//! W6: durable runs against a real Restate server that the test provisions (pinned, under
//! `target/peers/`), with the maintenance agent of `examples/durable.rs` as the worker. The
//! worker is killed with SIGKILL at each kind of step (after a tool step, in the middle of a
//! model stream, in the middle of a tool call, while an approval waits) and started again;
//! every run ends with the same answer as a run without a crash, and the side-effect ledger
//! holds each call's effect exactly once (W1, W2, W3). The run's usage and waiting calls are
//! read while it goes (W5), and the journal shows which steps it recorded.

mod support;

use std::time::Duration;

use anyhow::{Context as _, bail, ensure};
use support::durable::{Durable, eventually};
use tool_durable::{DecisionBody, RunEnd, RunRequest, Started};
use tool_runtime::{ErrorKind, RunOptions, UsageLimits};

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
        durable.client.resolve(&call.awakeable_id, &unfit).await?;
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
