//! W10: a step's result too large for the engine, against a real Restate server that the test
//! provisions (pinned, under `target/peers/`): it is refused before it is journaled, with a
//! clear error, and the run ends with it instead of failing every attempt and parking.

mod support;

use std::time::{Duration, Instant};

use anyhow::{bail, ensure};
use support::durable::Durable;
use tool_durable::{RunEnd, RunRequest, Started};
use tool_runtime::ErrorKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w10_a_step_result_over_the_limit_ends_the_run_with_a_clear_error() -> anyhow::Result<()> {
    let durable = Durable::start(&[("DURABLE_MAX_STEP_BYTES", "2000")]).await?;
    // A service id of 3,000 characters: the model's reply, which names it, is over the limit.
    let long = format!("svc-{}", "x".repeat(3000));
    let request = RunRequest::new(format!("Restart {long}."))
        .with_context(serde_json::json!({"principal": "ada"}));
    let started = Instant::now();
    ensure!(durable.client.start("run-big", &request).await? == Started::Now);
    let end = durable.client.output("run-big").await?;
    let RunEnd::Failed { kind, message, .. } = &end else {
        bail!("the run ends without an answer: {end:?}");
    };
    ensure!(*kind == ErrorKind::Journal, "{end:?}");
    ensure!(
        message.contains("step `request 1`") && message.contains("over the 2000 bytes"),
        "{message}"
    );
    ensure!(
        started.elapsed() < Duration::from_secs(30),
        "ended at once, not parked"
    );
    // The oversized reply was never recorded, and no call ran.
    let recorded = durable.recorded("run-big").await?;
    ensure!(recorded == ["discovery", "request 1"], "{recorded:?}");
    let journal = durable
        .server
        .query(
            "SELECT max(j.raw_length) AS largest FROM sys_journal j JOIN sys_invocation i \
             ON j.id = i.id WHERE i.target_service_key = 'run-big'",
        )
        .await?;
    let largest = journal
        .first()
        .and_then(|row| row["largest"].as_u64())
        .unwrap_or(u64::MAX);
    // The input holds the long id once; no entry holds the model's reply beside it.
    ensure!(largest < 4000, "the largest journal entry: {largest} bytes");
    ensure!(durable.effects().is_empty(), "{:?}", durable.effects());
    Ok(())
}
