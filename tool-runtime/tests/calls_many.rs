//! A turn of more calls than the run polls in one group (R2, P1–P4): the calls still run in
//! the model's order, a fatal call cancels the ones that had not started yet, every call is
//! joined or dropped when the caller cancels, and the stream hears of each call as it ends.

mod support {
    pub mod agent;
}

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use support::agent::{Args, drain, tool};
use tokio::sync::Barrier;
use tool_runtime::{
    Agent, CancellationToken, Context, ErrorKind, OutcomeKind, Permanent, RunEvent, ScriptedModel,
    ScriptedTurn,
};

/// How many calls a turn makes: more than one group of polled calls, and not a multiple of
/// its size.
const CALLS: usize = 70;

/// A turn of `CALLS` calls of `name` (the one at `fatal`, if any, of the tool `fatal`).
fn turn(name: &str, fatal: Option<usize>) -> ScriptedTurn {
    (0..CALLS).fold(ScriptedTurn::new(), |turn, i| {
        let tool = if Some(i) == fatal { "fatal" } else { name };
        turn.call(format!("c{i}"), tool, "{}")
    })
}

#[tokio::test]
async fn r2_calls_past_the_first_group_run_and_end_in_the_models_order() {
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&order);
    let now = tool("now", move |ctx: Context, _args: Args| {
        if let Some(call) = ctx.call() {
            seen.lock().unwrap().push(call.id.to_string());
        }
        async move { Ok::<_, std::io::Error>("done") }
    });
    let model = ScriptedModel::new([turn("now", None), ScriptedTurn::reply("all done")]);
    let agent = Agent::builder(model).tool(now).build().unwrap();

    let (events, out) = drain(agent.run_stream(&Context::new(), "go")).await;

    let out = out.unwrap();
    let ids: Vec<String> = (0..CALLS).map(|i| format!("c{i}")).collect();
    assert_eq!(*order.lock().unwrap(), ids, "started in the model's order");
    let recorded: Vec<&str> = out.calls.iter().map(|c| &*c.id).collect();
    assert_eq!(recorded, ids, "recorded in the model's order");
    let finished: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::CallFinished(record) => Some(&*record.id),
            _ => None,
        })
        .collect();
    assert_eq!(finished, ids, "calls that end at once end in order");
}

#[tokio::test]
async fn p2_a_fatal_call_past_the_first_group_cancels_the_calls_not_started() {
    let ran = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&ran);
    let now = tool("now", move |_ctx, _args: Args| {
        count.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, std::io::Error>("done") }
    });
    let fatal = tool("fatal", |_ctx, _args: Args| async move {
        Err::<(), _>(Permanent::new(std::io::Error::other("the disk is gone")))
    });
    let model = ScriptedModel::new([turn("now", Some(45)), ScriptedTurn::reply("never sent")]);
    let agent = Agent::builder(model).tool(now).tool(fatal).build().unwrap();

    let err = agent.run(&Context::new(), "go").await.unwrap_err();

    assert_eq!(err.kind(), ErrorKind::Permanent);
    assert_eq!(err.call_id(), Some("c45"));
    assert_eq!(
        ran.load(Ordering::SeqCst),
        45,
        "the calls after it never started"
    );
    let kinds: Vec<OutcomeKind> = err.calls().iter().map(|c| c.kind()).collect();
    assert_eq!(kinds.len(), CALLS);
    assert!(kinds[..45].iter().all(|k| *k == OutcomeKind::Success));
    assert_eq!(kinds[45], OutcomeKind::Fatal);
    assert!(kinds[46..].iter().all(|k| *k == OutcomeKind::Cancelled));
}

#[tokio::test(start_paused = true)]
async fn p4_cancelling_the_caller_ends_or_drops_every_call_of_a_large_turn() {
    // Every call starts, then waits: the even ones for their context, the odd ones for an
    // hour (they are dropped).
    let started = Arc::new(Barrier::new(CALLS + 1));
    let watched = Arc::new(AtomicUsize::new(0));
    let (b, saw) = (Arc::clone(&started), Arc::clone(&watched));
    let wait = tool("wait", move |ctx: Context, _args: Args| {
        let (b, saw) = (Arc::clone(&b), Arc::clone(&saw));
        async move {
            b.wait().await;
            let even = ctx.call().is_some_and(|call| {
                call.id
                    .trim_start_matches('c')
                    .parse::<usize>()
                    .is_ok_and(|i| i % 2 == 0)
            });
            if even {
                ctx.cancelled().await;
                saw.fetch_add(1, Ordering::SeqCst);
                return Err::<(), _>(std::io::Error::other("stopped"));
            }
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(())
        }
    });
    let model = ScriptedModel::new([turn("wait", None), ScriptedTurn::reply("never sent")]);
    let agent = Agent::builder(model)
        .tool(wait)
        .max_concurrency(CALLS)
        .build()
        .unwrap();
    let token = CancellationToken::new();
    let ctx = Context::new().with_cancellation(token.clone());
    let b = Arc::clone(&started);
    tokio::spawn(async move {
        b.wait().await;
        token.cancel();
    });

    let err = agent.run(&ctx, "go").await.unwrap_err();

    assert_eq!(err.kind(), ErrorKind::Cancelled);
    assert_eq!(
        watched.load(Ordering::SeqCst),
        CALLS / 2,
        "each watcher saw it"
    );
    let recorded: Vec<String> = err.calls().iter().map(|c| c.id.to_string()).collect();
    let ids: Vec<String> = (0..CALLS).map(|i| format!("c{i}")).collect();
    assert_eq!(recorded, ids);
    for (i, call) in err.calls().iter().enumerate() {
        if i % 2 == 1 {
            assert_eq!(call.kind(), OutcomeKind::Cancelled, "{i} was dropped");
        }
    }
}
