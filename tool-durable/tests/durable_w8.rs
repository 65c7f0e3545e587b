//! W8: a durable run operated from the client alone, against a real Restate server that the
//! test provisions (pinned, under `target/peers/`): its status read from the engine while no
//! worker runs, a decision for a call already decided answered with the first one, and a
//! timeout on every call. (Resuming a parked run is in `durable_w7.rs`.)

mod support;

use std::time::{Duration, Instant};

use anyhow::{bail, ensure};
use support::durable::Durable;
use tool_durable::{ClientError, Decided, DecisionBody, DurableClient, Phase, RunEnd};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w8_status_with_no_worker_and_a_second_decision_answered_with_the_first()
-> anyhow::Result<()> {
    let mut durable = Durable::start(&[]).await?;
    durable.start_run("run-ops").await?;
    durable.waiting("run-ops").await?;
    durable.worker.kill_hard()?;
    // The status comes from the engine's state: one query, answered with no worker.
    let asked = Instant::now();
    let status = durable.client.status("run-ops").await?;
    let took = asked.elapsed();
    ensure!(status.phase == Phase::Waiting, "{status:?}");
    ensure!(took < Duration::from_secs(5), "status took {took:?}");
    // Waiting for the end gives up after the client's wait.
    let short = durable.client.clone().with_wait(Duration::from_secs(1));
    let end = short.output("run-ops").await;
    ensure!(
        matches!(
            end,
            Err(ClientError::Timeout {
                call: "run end",
                ..
            })
        ),
        "{end:?}"
    );
    let first = DecisionBody::Deny {
        message: Some("not during the sale".to_owned()),
    };
    let decided = durable.client.decide("run-ops", "c2", &first).await?;
    ensure!(decided == Decided::Now, "{decided:?}");
    // A contrary decision while no worker has taken the first: answered with the first,
    // found in the engine's journal.
    let second = durable
        .client
        .decide("run-ops", "c2", &DecisionBody::Approve)
        .await?;
    ensure!(
        second
            == Decided::Before {
                first: first.clone()
            },
        "{second:?}"
    );
    let unknown = durable
        .client
        .decide("run-ops", "c9", &DecisionBody::Approve)
        .await;
    ensure!(
        matches!(unknown, Err(ClientError::NoCall { .. })),
        "{unknown:?}"
    );
    durable.worker.restart().await?;
    let end = durable.client.output("run-ops").await?;
    let RunEnd::Answer { text, .. } = &end else {
        bail!("the run goes on to its answer: {end:?}");
    };
    ensure!(text.contains("not during the sale"), "{text}");
    ensure!(
        durable.effects() == ["run-ops/1.0/c1 svc-7"],
        "the denied call never ran: {:?}",
        durable.effects()
    );
    decided_after_the_end(&durable, first).await
}

/// After the run took it, the decision is in the run's state, and still answered first; the
/// workflow's own `status` handler, which a running worker answers, says the same.
async fn decided_after_the_end(durable: &Durable, first: DecisionBody) -> anyhow::Result<()> {
    let status = durable.client.status("run-ops").await?;
    let (code, handled) = durable
        .server
        .call("/AgentRun/run-ops/status", serde_json::Value::Null)
        .await?;
    ensure!(code == 200, "the status handler: {code} {handled}");
    ensure!(
        serde_json::from_value::<tool_durable::RunStatus>(handled)? == status,
        "{status:?}"
    );
    ensure!(
        status.decided.len() == 1 && status.decided[0].decision == first,
        "{status:?}"
    );
    let late = durable
        .client
        .decide("run-ops", "c2", &DecisionBody::Approve)
        .await?;
    ensure!(late == Decided::Before { first }, "{late:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w8_every_client_call_gives_up_after_its_timeout() -> anyhow::Result<()> {
    // A peer that takes connections and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", silent.local_addr()?);
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            open.push(stream);
        }
    });
    let timeout = Duration::from_millis(300);
    let client = DurableClient::new(&url)
        .with_admin(&url)
        .with_timeout(timeout)
        .with_wait(timeout);
    let request = tool_durable::RunRequest::new("hi");
    let calls: Vec<(&str, Result<(), ClientError>)> = vec![
        ("start", client.start("r", &request).await.map(drop)),
        ("status", client.status("r").await.map(drop)),
        ("inspect", client.inspect("r").await.map(drop)),
        ("resume", client.resume("r").await.map(drop)),
        (
            "decide",
            client
                .decide("r", "c1", &DecisionBody::Approve)
                .await
                .map(drop),
        ),
        (
            "resolve",
            client.resolve("sign_1a", &DecisionBody::Approve).await,
        ),
        ("output", client.output("r").await.map(drop)),
    ];
    for (name, result) in calls {
        ensure!(
            matches!(result, Err(ClientError::Timeout { after, .. }) if after == timeout),
            "{name}: {result:?}"
        );
    }
    held.abort();
    Ok(())
}
