//! K3 on the agent loop: a handler reports progress through its context, and the run's stream
//! yields each report as `RunEvent::Progress` (call id, tool, values), in order, while the
//! call runs; a plain `run` has no listener, and reporting there does nothing.

mod support {
    pub mod agent;
}

use std::sync::Arc;
use std::time::Duration;

use support::agent::{Args, drain, tool};
use tokio::sync::Notify;
use tool_runtime::{Agent, Context, Progress, RunEvent, ScriptedModel, ScriptedTurn, Tool};

/// A tool that reports three steps of progress.
fn counting() -> Tool {
    tool("count", |ctx: Context, _args: Args| async move {
        ctx.progress(1.0, 3.0, "one");
        ctx.progress(2.0, 3.0, None);
        ctx.progress(3.0, None, "three");
        Ok::<_, std::io::Error>("counted")
    })
}

fn script() -> ScriptedModel {
    ScriptedModel::new([
        ScriptedTurn::new().call("c1", "count", "{}"),
        ScriptedTurn::reply("done"),
    ])
}

#[tokio::test]
async fn k3_the_stream_yields_a_handlers_progress_between_the_call_and_its_end() {
    let agent = Agent::builder(script()).tool(counting()).build().unwrap();
    let (events, end) = drain(agent.run_stream(&Context::new(), "go")).await;
    end.unwrap();

    let reports: Vec<(usize, usize, &str, &str, &Progress)> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::Progress {
                turn,
                index,
                id,
                tool,
                progress,
            } => Some((*turn, *index, &**id, &**tool, progress)),
            _ => None,
        })
        .collect();
    let expected = [
        Progress::new(1.0).with_total(3.0).with_message("one"),
        Progress::new(2.0).with_total(3.0),
        Progress::new(3.0).with_message("three"),
    ];
    assert_eq!(reports.len(), 3, "{events:?}");
    for (report, want) in reports.iter().zip(&expected) {
        assert_eq!(
            (report.0, report.1, report.2, report.3),
            (1, 0, "c1", "count")
        );
        assert_eq!(report.4, want);
    }

    // Between the call as requested and its end.
    let position = |wanted: fn(&RunEvent) -> bool| events.iter().position(wanted).unwrap();
    let requested = position(|e| matches!(e, RunEvent::ToolCall { .. }));
    let first = position(|e| matches!(e, RunEvent::Progress { .. }));
    let finished = position(|e| matches!(e, RunEvent::CallFinished(_)));
    assert!(requested < first && first < finished, "{events:?}");
}

#[tokio::test]
async fn k3_a_plain_run_listens_to_no_progress() {
    let listened = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let seen = Arc::clone(&listened);
    let quiet = tool("count", move |ctx: Context, _args: Args| {
        seen.store(ctx.wants_progress(), std::sync::atomic::Ordering::SeqCst);
        async move {
            ctx.progress(1.0, None, "nobody hears this");
            Ok::<_, std::io::Error>("counted")
        }
    });
    let agent = Agent::builder(script()).tool(quiet).build().unwrap();
    let out = agent.run(&Context::new(), "go").await.unwrap();
    assert_eq!(out.text, "done");
    assert!(!listened.load(std::sync::atomic::Ordering::SeqCst));
}

/// The report arrives while the call is still running: the handler waits until the test has
/// read the report, so a stream that is not woken by it would hang here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k3_progress_reaches_the_stream_while_the_call_still_runs() {
    let release = Arc::new(Notify::new());
    let gate = Arc::clone(&release);
    let waiting = tool("wait", move |ctx: Context, _args: Args| {
        let gate = Arc::clone(&gate);
        async move {
            ctx.progress(1.0, 2.0, "halfway");
            gate.notified().await;
            Ok::<_, std::io::Error>("released")
        }
    });
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "wait", "{}"),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model).tool(waiting).build().unwrap();
    let mut stream = agent.run_stream(&Context::new(), "go");
    let next_progress = async {
        loop {
            match stream.next().await {
                Some(Ok(RunEvent::Progress { progress, .. })) => break progress,
                Some(Ok(_)) => continue,
                other => panic!("the run ended before its progress: {other:?}"),
            }
        }
    };
    // The deadline is checked first: a stream that only found the report when the deadline
    // woke it up fails.
    let progress = tokio::select! {
        biased;
        () = tokio::time::sleep(Duration::from_secs(5)) => {
            panic!("the progress event did not wake the stream while the call waited")
        }
        progress = next_progress => progress,
    };
    assert_eq!(progress.message.as_deref(), Some("halfway"));
    release.notify_one();
    let mut finished = false;
    while let Some(event) = stream.next().await {
        finished |= matches!(event, Ok(RunEvent::Finished(_)));
    }
    assert!(finished);
}
