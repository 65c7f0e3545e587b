//! W9, shown in one process: a journal that takes a turn's calls concurrently gets them as
//! plain data, in the model's order, with the agent's `max_concurrency` as its limit, and runs
//! each with `CallStep::run`; the run reads each call's outcome from its recorded form. A
//! sequential tool's call (L4) is given alone; a fatal outcome (P2) starts no further call.
//! The Restate journal of `tool-durable` is tested against a real server there.
mod support {
    pub mod agent;
}

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use serde_json::Value;
use support::agent::{Args, tool};
use tool_runtime::journal::{CallBatch, CallResults, Journal, JournalError, MemoryJournal, Step};
use tool_runtime::{
    Agent, BoxFuture, Context, ErrorKind, OutcomeKind, Permanent, RunRequest, ScriptedModel,
    ScriptedTurn,
};

/// A journal in memory that takes calls concurrently: each batch's calls run here, started in
/// order, at most the batch's limit at once; it keeps the batches it was given.
struct Concurrent {
    steps: MemoryJournal,
    agent: Agent,
    ctx: Context,
    /// Each batch: its call ids in the order given, and its limit.
    batches: Mutex<Vec<(Vec<String>, usize)>>,
}

impl Journal for Concurrent {
    fn run_id(&self) -> &str {
        self.steps.run_id()
    }

    fn step<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Result<Value, JournalError>> {
        self.steps.step(step)
    }

    fn parallel_calls(&self) -> bool {
        true
    }

    fn calls<'a>(
        &'a self,
        batch: CallBatch<'a>,
    ) -> BoxFuture<'a, Result<CallResults, JournalError>> {
        Box::pin(async move {
            let ids = batch.calls().iter().map(|c| c.id().to_owned()).collect();
            self.batches
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((ids, batch.limit()));
            let mut results: CallResults = vec![None; batch.calls().len()];
            let mut running = FuturesUnordered::new();
            let (mut next, mut more) = (0, true);
            loop {
                while more && next < batch.calls().len() && running.len() < batch.limit() {
                    let call = &batch.calls()[next];
                    let index = next;
                    running.push(async move {
                        (index, call.run(&self.agent, &self.ctx, self.run_id()).await)
                    });
                    next += 1;
                }
                let Some((index, value)) = running.next().await else {
                    break;
                };
                let value = value.map_err(|retry| JournalError::new("call", retry.to_string()));
                if let Ok(value) = &value {
                    more &= batch.ended(index, value);
                }
                results[index] = Some(value);
            }
            Ok(results)
        })
    }
}

/// A tool that takes 20 ms and counts how many of its calls are in flight at once.
fn slow(name: &str, flying: Arc<AtomicUsize>, most: Arc<AtomicUsize>) -> tool_runtime::Tool {
    tool(name, move |ctx: Context, args: Args| {
        let (flying, most) = (Arc::clone(&flying), Arc::clone(&most));
        async move {
            let now = flying.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            flying.fetch_sub(1, Ordering::SeqCst);
            Ok::<_, std::convert::Infallible>(serde_json::json!({
                "key": ctx.idempotency_key(),
                "args": args,
            }))
        }
    })
}

fn concurrent(agent: &Agent) -> Concurrent {
    Concurrent {
        steps: MemoryJournal::new("run-w9"),
        agent: agent.clone(),
        ctx: Context::new(),
        batches: Mutex::new(Vec::new()),
    }
}

#[tokio::test]
async fn w9_a_turns_calls_go_to_the_journal_in_order_within_max_concurrency() {
    let (flying, most) = (Arc::default(), Arc::new(AtomicUsize::new(0)));
    let mut turn = ScriptedTurn::new();
    for i in 1..=5 {
        turn = turn.call(format!("c{i}"), "slow", format!(r#"{{"n":{i}}}"#));
    }
    let model = ScriptedModel::new([turn, ScriptedTurn::reply("done")]);
    let agent = Agent::builder(model)
        .tool(slow("slow", flying, Arc::clone(&most)))
        .max_concurrency(2)
        .build()
        .unwrap();
    let journal = concurrent(&agent);
    let output = agent
        .execute(&Context::new(), RunRequest::new("go").journal(&journal))
        .await
        .unwrap();
    assert_eq!(output.text, "done");
    let batches = journal.batches.lock().unwrap().clone();
    let ids: Vec<String> = (1..=5).map(|i| format!("c{i}")).collect();
    assert_eq!(batches, [(ids.clone(), 2)]);
    assert_eq!(
        most.load(Ordering::SeqCst),
        2,
        "two calls at once, never more"
    );
    // The records come back in the model's order, each with the key the run gives it (W2).
    let recorded: Vec<&str> = output.calls.iter().map(|c| &*c.id).collect();
    assert_eq!(recorded, ids);
    for (i, call) in output.calls.iter().enumerate() {
        assert_eq!(call.kind(), OutcomeKind::Success, "{call:?}");
        let text: Value = serde_json::from_str(call.text()).unwrap();
        assert_eq!(text["key"], format!("run-w9/1.{i}/c{}", i + 1));
    }
    // The calls are not steps of the run's own journal: the journal took them.
    assert_eq!(journal.steps.steps().len(), 3, "discovery and two requests");
}

#[tokio::test]
async fn w9_l4_a_sequential_call_is_given_alone() {
    let (flying, most) = (Arc::default(), Arc::new(AtomicUsize::new(0)));
    let alone = tool_runtime::Tool::builder("alone", "Runs alone.")
        .sequential()
        .handler(|_ctx, _args: Args| async { Ok::<_, std::convert::Infallible>("alone") })
        .build();
    let turn = ScriptedTurn::new()
        .call("c1", "slow", "{}")
        .call("c2", "slow", "{}")
        .call("c3", "alone", "{}")
        .call("c4", "slow", "{}");
    let model = ScriptedModel::new([turn, ScriptedTurn::reply("done")]);
    let agent = Agent::builder(model)
        .tool(slow("slow", flying, most))
        .tool(alone)
        .max_concurrency(4)
        .build()
        .unwrap();
    let journal = concurrent(&agent);
    agent
        .execute(&Context::new(), RunRequest::new("go").journal(&journal))
        .await
        .unwrap();
    let batches = journal.batches.lock().unwrap().clone();
    let ids = |ids: &[&str]| ids.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        batches,
        [
            (ids(&["c1", "c2"]), 4),
            (ids(&["c3"]), 1),
            (ids(&["c4"]), 4)
        ]
    );
}

#[tokio::test]
async fn w9_p2_a_fatal_outcome_starts_no_further_call() {
    let started = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&started);
    let fails = tool("fails", move |_ctx, _args: Args| {
        counter.fetch_add(1, Ordering::SeqCst);
        async { Err::<(), _>(Permanent::new(std::io::Error::other("the disk is gone"))) }
    });
    let mut turn = ScriptedTurn::new();
    for i in 1..=4 {
        turn = turn.call(format!("c{i}"), "fails", "{}");
    }
    let agent = Agent::builder(ScriptedModel::new([turn]))
        .tool(fails)
        .max_concurrency(1)
        .build()
        .unwrap();
    let journal = concurrent(&agent);
    let err = agent
        .execute(&Context::new(), RunRequest::new("go").journal(&journal))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Permanent);
    assert_eq!(
        started.load(Ordering::SeqCst),
        1,
        "one call in flight, none after it"
    );
    let kinds: Vec<OutcomeKind> = err.calls().iter().map(|c| c.kind()).collect();
    assert_eq!(kinds[0], OutcomeKind::Fatal);
    assert!(
        kinds[1..].iter().all(|k| *k == OutcomeKind::Cancelled),
        "{kinds:?}"
    );
}

#[tokio::test]
async fn w9_b2_a_turn_that_calls_a_sub_agent_runs_one_call_at_a_time_its_steps_the_runs() {
    let (flying, most) = (Arc::default(), Arc::new(AtomicUsize::new(0)));
    let helper = Agent::builder(ScriptedModel::new([ScriptedTurn::reply("helped")]))
        .build()
        .expect("builds");
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("a1", "helper", r#"{"request":"help"}"#)
            .call("s1", "slow", r#"{"n":1}"#),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(slow("slow", flying, most))
        .agent_tool(helper.as_tool("helper", "Helps."))
        .max_concurrency(2)
        .build()
        .expect("builds");
    let journal = concurrent(&agent);
    let output = agent
        .execute(&Context::new(), RunRequest::new("Go").journal(&journal))
        .await
        .expect("the run ends");
    assert_eq!(output.text, "done");
    // No batch went to the journal's concurrent calls: the sub-agent's steps are the run's.
    assert!(journal.batches.lock().expect("lock").is_empty());
    let names: Vec<String> = journal
        .steps
        .steps()
        .iter()
        .map(|(kind, _)| kind.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "discovery",
            "request 1",
            "call a1 helper > discovery",
            "call a1 helper > request 1",
            "call a1 helper",
            "call s1 slow",
            "request 2"
        ]
    );
}
