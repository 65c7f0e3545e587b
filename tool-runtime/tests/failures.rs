//! Failures through the run loop: permanent failures (P1), sibling cancellation and joining
//! (P2), the initiating failure winning (P3), caller cancellation (P4), panics (E4),
//! timeouts, and redacted errors kept for the application (E3).

mod support {
    pub mod agent;
}

use std::error::Error as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use support::agent::{Args, DropFlag, drain, mentions, texts, tool, well_formed};
use tokio::sync::Barrier;
use tokio::time::Instant;
use tool_runtime::{
    Agent, CancellationToken, Context, ErrorKind, OutcomeKind, Permanent, RunEvent, ScriptedModel,
    ScriptedTurn, ToolError,
};

#[tokio::test]
async fn p1_a_permanent_failure_ends_the_run_with_its_cause() {
    let broken = tool("broken", |_ctx, _args: Args| async move {
        Err::<(), _>(Permanent::new(std::io::Error::other("the disk is gone")))
    });
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "broken", "{}"),
        ScriptedTurn::reply("never sent"),
    ]);
    let agent = Agent::builder(model.clone()).tool(broken).build().unwrap();

    let err = agent.run(&Context::new(), "go").await.unwrap_err();

    assert_eq!(err.kind(), ErrorKind::Permanent);
    assert!(err.is(ErrorKind::Permanent));
    assert_eq!((err.tool(), err.call_id()), (Some("broken"), Some("c1")));
    assert!(format!("{err:#}").contains("the disk is gone"));
    assert_eq!(err.call_error().unwrap().kind(), ErrorKind::Permanent);
    assert_eq!(
        model.request_count(),
        1,
        "no request after a permanent failure"
    );
    assert_eq!(model.remaining(), 1);
    assert!(well_formed(err.transcript()));
    assert_eq!(err.transcript().last().unwrap().text(), "the tool failed");
}

#[tokio::test(start_paused = true)]
async fn p2_siblings_are_cancelled_and_joined_even_one_that_ignores_cancellation() {
    let barrier = Arc::new(Barrier::new(3));
    let polite_saw_cancel = Arc::new(AtomicBool::new(false));
    let stubborn_finished = Arc::new(AtomicBool::new(false));

    let b = Arc::clone(&barrier);
    let boom = tool("boom", move |_ctx, _args: Args| {
        let b = Arc::clone(&b);
        async move {
            b.wait().await;
            Err::<(), _>(Permanent::new(std::io::Error::other("boom")))
        }
    });
    let (b, saw) = (Arc::clone(&barrier), Arc::clone(&polite_saw_cancel));
    let polite = tool("polite", move |ctx: Context, _args: Args| {
        let (b, saw) = (Arc::clone(&b), Arc::clone(&saw));
        async move {
            b.wait().await;
            ctx.cancelled().await;
            saw.store(true, Ordering::SeqCst);
            Err::<(), _>(std::io::Error::other("cancelled"))
        }
    });
    let (b, finished) = (Arc::clone(&barrier), Arc::clone(&stubborn_finished));
    let stubborn = tool("stubborn", move |_ctx, _args: Args| {
        let (b, finished) = (Arc::clone(&b), Arc::clone(&finished));
        async move {
            b.wait().await;
            // Ignores cancellation entirely.
            tokio::time::sleep(Duration::from_secs(60)).await;
            finished.store(true, Ordering::SeqCst);
            Ok::<_, std::io::Error>("finished anyway")
        }
    });
    let model = ScriptedModel::new([ScriptedTurn::new()
        .call("s1", "stubborn", "{}")
        .call("p1", "polite", "{}")
        .call("b1", "boom", "{}")]);
    let agent = Agent::builder(model)
        .tool(boom)
        .tool(polite)
        .tool(stubborn)
        .build()
        .unwrap();
    let started = Instant::now();

    let err = agent.run(&Context::new(), "go").await.unwrap_err();

    assert_eq!(err.call_id(), Some("b1"));
    assert!(
        polite_saw_cancel.load(Ordering::SeqCst),
        "the sibling saw cancellation"
    );
    assert!(
        stubborn_finished.load(Ordering::SeqCst),
        "the sibling that ignores cancellation was joined before run returned"
    );
    assert!(started.elapsed() >= Duration::from_secs(60));
    let kinds: Vec<_> = err.calls().iter().map(|c| c.kind()).collect();
    assert_eq!(
        kinds,
        [
            OutcomeKind::Success,
            OutcomeKind::Failed,
            OutcomeKind::Fatal
        ]
    );
    assert!(well_formed(err.transcript()));
}

#[tokio::test]
async fn p3_the_initiating_failure_wins_over_ten_siblings_cancellation_errors() {
    let barrier = Arc::new(Barrier::new(11));
    let b = Arc::clone(&barrier);
    let first = tool("first", move |_ctx, _args: Args| {
        let b = Arc::clone(&b);
        async move {
            b.wait().await;
            Err::<(), _>(Permanent::new(std::io::Error::other(
                "the initiating failure",
            )))
        }
    });
    let b = Arc::clone(&barrier);
    let sibling = tool("sibling", move |ctx: Context, _args: Args| {
        let b = Arc::clone(&b);
        async move {
            b.wait().await;
            ctx.cancelled().await;
            // A sibling that turns its cancellation into a permanent failure of its own.
            Err::<(), _>(Permanent::new(std::io::Error::other(
                "a sibling's cancellation",
            )))
        }
    });
    let mut turn = ScriptedTurn::new();
    for i in 0..5 {
        turn = turn.call(format!("s{i}"), "sibling", "{}");
    }
    turn = turn.call("f", "first", "{}");
    for i in 5..10 {
        turn = turn.call(format!("s{i}"), "sibling", "{}");
    }
    let model = ScriptedModel::new([turn]);
    let agent = Agent::builder(model)
        .tool(first)
        .tool(sibling)
        .max_concurrency(11)
        .build()
        .unwrap();

    let err = agent.run(&Context::new(), "go").await.unwrap_err();

    assert_eq!((err.tool(), err.call_id()), (Some("first"), Some("f")));
    let chain = format!("{err:#}");
    assert!(chain.contains("the initiating failure"), "{chain}");
    assert!(!chain.contains("sibling's cancellation"), "{chain}");
    // All ten siblings were joined: each has its (fatal, later) outcome recorded.
    assert_eq!(err.calls().len(), 11);
    assert!(err.calls().iter().all(|c| c.kind() == OutcomeKind::Fatal));
}

#[tokio::test(start_paused = true)]
async fn p4_cancelling_the_caller_stops_model_io() {
    let model = ScriptedModel::new([ScriptedTurn::new().text("thinking…").hang()]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let token = CancellationToken::new();
    let ctx = Context::new().with_cancellation(token.clone());
    let started = Instant::now();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        token.cancel();
    });

    let err = agent.run(&ctx, "go").await.unwrap_err();

    assert_eq!(err.kind(), ErrorKind::Cancelled);
    assert_eq!(model.request_count(), 1);
    assert_eq!(started.elapsed(), Duration::from_secs(1));
    assert_eq!(
        err.transcript().len(),
        1,
        "the unfinished reply is not kept"
    );
}

#[tokio::test(start_paused = true)]
async fn p4_cancelling_the_caller_stops_calls_in_flight() {
    let both_started = Arc::new(Barrier::new(3));
    let watcher_saw = Arc::new(AtomicBool::new(false));
    let deaf_dropped = Arc::new(AtomicBool::new(false));
    let deaf_finished = Arc::new(AtomicBool::new(false));

    let (b, saw) = (Arc::clone(&both_started), Arc::clone(&watcher_saw));
    let watcher = tool("watcher", move |ctx: Context, _args: Args| {
        let (b, saw) = (Arc::clone(&b), Arc::clone(&saw));
        async move {
            b.wait().await;
            ctx.cancelled().await;
            saw.store(true, Ordering::SeqCst);
            Err::<(), _>(std::io::Error::other("stopped"))
        }
    });
    let (b, dropped, finished) = (
        Arc::clone(&both_started),
        Arc::clone(&deaf_dropped),
        Arc::clone(&deaf_finished),
    );
    let deaf = tool("deaf", move |_ctx, _args: Args| {
        let (b, finished) = (Arc::clone(&b), Arc::clone(&finished));
        let guard = DropFlag(Arc::clone(&dropped));
        async move {
            let _guard = guard;
            b.wait().await;
            tokio::time::sleep(Duration::from_secs(3600)).await;
            finished.store(true, Ordering::SeqCst);
            Ok::<_, std::io::Error>("too late")
        }
    });
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("w", "watcher", "{}")
            .call("d", "deaf", "{}"),
        ScriptedTurn::reply("never sent"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(watcher)
        .tool(deaf)
        .build()
        .unwrap();
    let token = CancellationToken::new();
    let ctx = Context::new().with_cancellation(token.clone());
    let b = Arc::clone(&both_started);
    tokio::spawn(async move {
        b.wait().await;
        token.cancel();
    });
    let started = Instant::now();

    let err = agent.run(&ctx, "go").await.unwrap_err();

    assert_eq!(err.kind(), ErrorKind::Cancelled);
    assert!(
        watcher_saw.load(Ordering::SeqCst),
        "the call saw the cancellation"
    );
    assert!(
        deaf_dropped.load(Ordering::SeqCst),
        "the deaf call's future was dropped"
    );
    assert!(!deaf_finished.load(Ordering::SeqCst));
    assert!(started.elapsed() < Duration::from_secs(3600));
    assert_eq!(model.request_count(), 1);
    assert!(well_formed(err.transcript()), "every call has a result");
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_is_dropped_and_the_model_is_told_so() {
    let dropped = Arc::new(AtomicBool::new(false));
    let finished = Arc::new(AtomicBool::new(false));
    let (d, f) = (Arc::clone(&dropped), Arc::clone(&finished));
    let slow = tool("slow", move |_ctx, _args: Args| {
        let guard = DropFlag(Arc::clone(&d));
        let f = Arc::clone(&f);
        async move {
            let _guard = guard;
            tokio::time::sleep(Duration::from_secs(3600)).await;
            f.store(true, Ordering::SeqCst);
            Ok::<_, std::io::Error>("late")
        }
    });
    let quick = tool("quick", |_ctx, _args: Args| async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        Ok::<_, std::io::Error>("quick")
    });
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "slow", "{}")
            .call("c2", "quick", "{}"),
        ScriptedTurn::reply("one timed out"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(slow)
        .tool(quick)
        .call_timeout(Duration::from_secs(1))
        .tool_timeout("slow", Duration::from_secs(5))
        .build()
        .unwrap();
    let started = Instant::now();

    let out = agent.run(&Context::new(), "go").await.unwrap();

    assert_eq!(
        out.text, "one timed out",
        "the loop goes on after a timeout"
    );
    assert_eq!(
        texts(&model.requests()[1].tool_results()),
        [
            ("c1".to_owned(), "the tool timed out".to_owned()),
            ("c2".to_owned(), "the tool timed out".to_owned())
        ]
    );
    assert_eq!(out.calls[0].kind(), OutcomeKind::TimedOut);
    assert_eq!(out.calls[0].error().unwrap().kind(), ErrorKind::Timeout);
    assert!(dropped.load(Ordering::SeqCst) && !finished.load(Ordering::SeqCst));
    // The per-tool timeout (5 s) overrides the default (1 s, which `quick` ran past).
    assert_eq!(started.elapsed(), Duration::from_secs(5));
}

#[tokio::test]
async fn e4_a_panicking_handler_ends_the_run_with_kind_panic_and_the_model_sees_nothing() {
    let fragile = tool("fragile", |_ctx, _args: Args| async move {
        if true {
            panic!("SECRET internal invariant broken");
        }
        Ok::<_, std::io::Error>(())
    });
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "fragile", "{}"),
        ScriptedTurn::reply("never sent"),
    ]);
    let agent = Agent::builder(model.clone()).tool(fragile).build().unwrap();

    let err = agent.run(&Context::new(), "go").await.unwrap_err();

    assert_eq!(err.kind(), ErrorKind::Panic);
    assert!(err.is(ErrorKind::Permanent));
    assert!(format!("{err:#}").contains("SECRET internal invariant broken"));
    assert!(!mentions(err.transcript(), "SECRET"));
    assert_eq!(model.request_count(), 1);
}

#[tokio::test]
async fn e3_redacted_errors_stay_available_in_the_record_and_in_stream_events() {
    let failing = tool("failing", |_ctx, _args: Args| async move {
        Err::<(), _>(std::io::Error::other("SECRET connection string rejected"))
    });
    let refusing = tool("refusing", |_ctx, _args: Args| async move {
        Err::<(), _>(ToolError::new("No maintenance window is scheduled."))
    });
    let script = || {
        ScriptedModel::new([
            ScriptedTurn::new()
                .call("c1", "failing", "{}")
                .call("c2", "refusing", "{}"),
            ScriptedTurn::reply("done"),
        ])
    };
    let model = script();
    let agent = Agent::builder(model.clone())
        .tool(failing.clone())
        .tool(refusing.clone())
        .build()
        .unwrap();

    let out = agent.run(&Context::new(), "go").await.unwrap();

    // The model reads the E2 texts only ...
    assert_eq!(
        texts(&model.requests()[1].tool_results()),
        [
            ("c1".to_owned(), "the tool failed".to_owned()),
            (
                "c2".to_owned(),
                "No maintenance window is scheduled.".to_owned()
            )
        ]
    );
    assert!(!mentions(&out.transcript, "SECRET"));
    // ... the application reads everything.
    let error = out.calls[0].error().unwrap();
    assert_eq!(error.kind(), ErrorKind::Handler);
    assert!(format!("{error:#}").contains("SECRET connection string rejected"));
    assert_eq!(out.calls[0].kind(), OutcomeKind::Failed);
    assert_eq!(out.calls[1].kind(), OutcomeKind::Rejected);
    let tool_error = out.calls[1].error().unwrap().tool_error().unwrap();
    assert_eq!(tool_error.text(), "No maintenance window is scheduled.");

    // The same in the stream's events.
    let agent = Agent::builder(script())
        .tool(failing)
        .tool(refusing)
        .build()
        .unwrap();
    let (events, end) = drain(agent.run_stream(&Context::new(), "go")).await;
    end.unwrap();
    let finished = events
        .iter()
        .find_map(|e| match e {
            RunEvent::CallFinished(record) if &*record.id == "c1" => Some(record),
            _ => None,
        })
        .unwrap();
    assert_eq!(finished.text(), "the tool failed");
    let source = finished.error().unwrap().source().unwrap();
    assert_eq!(source.to_string(), "SECRET connection string rejected");
}
