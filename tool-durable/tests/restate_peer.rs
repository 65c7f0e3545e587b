//! The smoke test of the tests' Restate support (`tests/support/`): a real Restate server,
//! provisioned by the test itself, and a worker (the example `restate_echo`) that is killed
//! with SIGKILL while its workflow waits on an awakeable. The awakeable is resolved while no
//! worker runs; the restarted worker finishes the workflow from its journal, without running
//! its journaled step again.

mod support;

use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use serde_json::{Value, json};
use support::{RestateServer, TempDir, Worker};

/// How long the test waits for the workflow to make its awakeable, and to finish.
const PATIENCE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_killed_worker_resumes_its_workflow_without_running_a_step_again() -> anyhow::Result<()> {
    let started = Instant::now();
    let server = RestateServer::start().await?;
    eprintln!("server up after {:.1?}", started.elapsed());

    let ledger_dir = TempDir::new("restate-echo-ledger")?;
    let ledger = ledger_dir.path().join("effects.txt");
    let ledger_env = ledger.to_str().context("a UTF-8 temporary path")?;
    let mut worker = Worker::start("restate_echo", &[], &[("EFFECTS_FILE", ledger_env)]).await?;
    eprintln!("worker up after {:.1?}", started.elapsed());

    let deployment = server.register(&worker.url()).await?;
    let services: Vec<&str> = deployment["services"]
        .as_array()
        .context("the deployment lists its services")?
        .iter()
        .filter_map(|service| service["name"].as_str())
        .collect();
    assert_eq!(services, ["Echo"], "{deployment}");

    let (status, sent) = server.send("/Echo/smoke/run", Value::Null).await?;
    assert_eq!(status, 202, "{sent}");
    let invocation = sent["invocationId"]
        .as_str()
        .context("the send answer holds the invocation id")?
        .to_owned();

    // The shared handler reads the awakeable's id from the workflow's state once `run` has
    // set it.
    let awakeable = poll(PATIENCE, || async {
        let (status, body) = server.call("/Echo/smoke/awakeable", Value::Null).await?;
        ensure!(
            status == 200,
            "the shared handler answered {status}: {body}"
        );
        Ok(body.as_str().filter(|id| !id.is_empty()).map(str::to_owned))
    })
    .await
    .context("the workflow made no awakeable")?;

    worker.kill_hard()?;
    server.resolve_awakeable(&awakeable, json!("hello")).await?;
    assert_eq!(
        server.workflow_output("Echo", "smoke").await?,
        None,
        "the workflow cannot finish while no worker runs"
    );

    let restarted = Instant::now();
    worker.restart().await?;
    let output = server.attach_workflow("Echo", "smoke", PATIENCE).await?;
    assert_eq!(output, (200, json!("hello")), "{}", worker.log());
    eprintln!(
        "the workflow finished {:.1?} after the worker's restart",
        restarted.elapsed()
    );

    let effects = std::fs::read_to_string(&ledger).context("the ledger")?;
    assert_eq!(
        effects.lines().collect::<Vec<_>>(),
        ["run smoke"],
        "the journaled step ran exactly once"
    );

    let rows = server
        .query(&format!(
            "SELECT target, status FROM sys_invocation WHERE id = '{invocation}'"
        ))
        .await?;
    assert_eq!(
        rows,
        [json!({"target": "Echo/smoke/run", "status": "completed"})]
    );
    eprintln!("the whole test took {:.1?}", started.elapsed());
    Ok(())
}

/// Calls `check` every 50 ms until it gives a value, for up to `patience`.
async fn poll<T, F, Fut>(patience: Duration, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<Option<T>>>,
{
    let deadline = Instant::now() + patience;
    loop {
        if let Some(value) = check().await? {
            return Ok(value);
        }
        if Instant::now() > deadline {
            bail!("nothing within {patience:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
