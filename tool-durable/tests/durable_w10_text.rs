//! W10: the model's text reaches a caller while a durable run goes, against a real Restate
//! server that the test provisions (pinned, under `target/peers/`): the example's worker posts
//! each piece as it streams ([`tool_durable::AgentRun::text_to`]), a client polls it
//! ([`tool_durable::DurableClient::text`]). The worker is killed while the final answer
//! streams: the request is taken again, its text streams again under attempt 2, and each
//! turn's text from its highest attempt is the run's answer.

mod support;

use anyhow::{Context as _, ensure};
use support::durable::{ANSWER, Durable, eventually};
use tool_durable::{RunEnd, TextDeltas};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w10_text_streams_to_a_caller_and_again_after_a_crash() -> anyhow::Result<()> {
    // The model's events come 700 ms apart: the answer's two pieces are far enough apart to
    // kill the worker between them.
    let mut durable = Durable::start(&[("DURABLE_MODEL_DELAY_MS", "700")]).await?;
    durable.start_run("run-text").await?;
    let status = durable.waiting("run-text").await?;
    // Turn 1 asked for calls only: no text yet.
    let before = durable.client.text("run-text", 0).await?;
    ensure!(before.deltas.is_empty(), "{before:?}");
    durable.approve(&status).await?;

    // The answer's first piece arrives while its request still streams: kill the worker.
    let first: TextDeltas = eventually("the answer's first piece", || async {
        let read = durable.client.text("run-text", 0).await.ok()?;
        (!read.deltas.is_empty()).then_some(read)
    })
    .await?;
    durable.worker.kill_hard()?;
    ensure!(
        first.deltas[0].turn == 2 && first.deltas[0].attempt == 1,
        "{first:?}"
    );
    ensure!(first.deltas[0].text == "Done. ", "{first:?}");
    durable.worker.restart().await?;

    let end = durable.client.output("run-text").await?;
    let RunEnd::Answer { text, .. } = &end else {
        anyhow::bail!("the run ended without an answer: {end:?}");
    };
    ensure!(text == ANSWER, "{text}");

    // Read on from where the first read ended: the second attempt's pieces, whole.
    let rest: TextDeltas = eventually("the second attempt's text", || async {
        let read = durable.client.text("run-text", first.next).await.ok()?;
        let attempt_2: String = (read.deltas.iter())
            .filter(|d| d.turn == 2 && d.attempt == 2)
            .map(|d| d.text.as_str())
            .collect();
        (attempt_2 == ANSWER).then_some(read)
    })
    .await
    .with_context(|| durable.worker.log())?;
    ensure!(rest.deltas.iter().all(|d| d.index > first.next), "{rest:?}");
    ensure!(rest.next >= first.next + 2, "{rest:?}");
    // All of it: each turn's text from its highest attempt is the answer.
    let all = durable.client.text("run-text", 0).await?;
    ensure!(all.text() == [(2, ANSWER.to_owned())], "{all:?}");
    ensure!(all.dropped == 0, "{all:?}");
    Ok(())
}
