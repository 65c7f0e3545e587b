//! A durable run's steps go through its journal (W1, W2, W4), shown in one process with the
//! journal in memory: the run is cut after every step in turn (its process "dies": the next
//! step is never recorded), then taken again by a new agent from the same journal. Nothing
//! recorded runs again, every call's effect happens once in all, and the run ends as it did
//! uncut. The Restate journal of `tool-durable` is tested against a real server there.
mod support {
    pub mod agent;
    pub mod approvals;
    pub mod journal;
}

use std::sync::{Arc, Mutex};

use serde_json::Value;
use support::agent::Args;
use support::approvals::{CONTEXT_SECRET, Fixture, admin};
use support::journal::Dies;
use tool_runtime::RunRequest;
use tool_runtime::journal::{Journal, JournalError, MemoryJournal, Step, StepKind};
use tool_runtime::{
    BoxFuture, Context, Decision, Decisions, ErrorKind, RunOutput, ScriptedModel, ScriptedTurn,
    Tool,
};

fn script() -> Vec<ScriptedTurn> {
    vec![
        ScriptedTurn::new()
            .call("c1", "echo", r#"{"word":"hi"}"#)
            .call("c2", "restart", r#"{"service_id":"dev-db"}"#)
            .usage(10, 5),
        ScriptedTurn::new().call("c3", "leaky", "{}").usage(20, 5),
        ScriptedTurn::reply("all done").usage(30, 5),
    ]
}

fn requests_in(journal: &MemoryJournal) -> usize {
    journal
        .steps()
        .iter()
        .filter(|(kind, _)| matches!(kind, StepKind::Request { .. }))
        .count()
}

async fn uncut() -> (RunOutput, MemoryJournal) {
    let fixture = Fixture::new();
    let journal = MemoryJournal::new("run-w1");
    let agent = fixture.agent(ScriptedModel::new(script()), None);
    let output = agent
        .execute(
            &admin(),
            RunRequest::new("Restart dev-db").journal(&journal),
        )
        .await
        .expect("the run ends with an answer");
    (output, journal)
}

#[tokio::test]
async fn w1_each_request_and_call_is_one_step_in_the_models_order() {
    let (output, journal) = uncut().await;
    assert_eq!(output.text, "all done");
    let names: Vec<String> = journal.steps().iter().map(|(k, _)| k.to_string()).collect();
    assert_eq!(
        names,
        [
            "discovery",
            "request 1",
            "call c1 echo",
            "call c2 restart",
            "request 2",
            "call c3 leaky",
            "request 3"
        ]
    );
    // W4: the journal holds no context value and no unredacted error.
    let text = serde_json::to_string(&journal.steps()).expect("JSON");
    assert!(!text.contains(CONTEXT_SECRET), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    assert_eq!(journal.ran(), 7);
}

#[tokio::test]
async fn w1_a_run_cut_after_any_step_continues_from_its_journal_and_runs_nothing_twice() {
    let (straight, whole) = uncut().await;
    let steps = whole.steps().len();
    for cut in 0..steps {
        // The first process: cut before step `cut` is recorded.
        let first = Fixture::new();
        let journal = MemoryJournal::new("run-w1");
        let dies = Dies {
            inner: journal.clone(),
            cut,
        };
        let agent = first.agent(ScriptedModel::new(script()), None);
        let error = agent
            .execute(&admin(), RunRequest::new("Restart dev-db").journal(&dies))
            .await
            .expect_err("the process dies");
        assert_eq!(error.kind(), ErrorKind::Journal, "cut {cut}: {error:#}");

        // The second process: a new agent whose model holds only the turns not journaled.
        let second = Fixture::new();
        let done = requests_in(&journal);
        let model = ScriptedModel::new(script().into_iter().skip(done));
        let agent = second.agent(model, None);
        let replay = journal.replay();
        let output = agent
            .execute(&admin(), RunRequest::new("Restart dev-db").journal(&replay))
            .await
            .unwrap_or_else(|e| panic!("cut {cut}: the run goes on: {e:#}"));
        assert_eq!(output.text, straight.text, "cut {cut}");
        assert_eq!(output.transcript, straight.transcript, "cut {cut}");
        assert_eq!(output.usage, straight.usage, "cut {cut}");
        // Each call's effect once in all.
        let echoes = first.echo_runs.load(std::sync::atomic::Ordering::SeqCst)
            + second.echo_runs.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(echoes, 1, "cut {cut}");
        let mut restarted = first.restarted();
        restarted.extend(second.restarted());
        assert_eq!(restarted, ["dev-db"], "cut {cut}");
        // Every step ran once, across both processes.
        assert_eq!(journal.ran(), steps, "cut {cut}");
        assert_eq!(journal.steps(), whole.steps(), "cut {cut}");
    }
}

/// The tool `charge`, and the idempotency key each of its calls saw (W2).
fn key_recorder() -> (Tool, Arc<Mutex<Vec<Option<String>>>>) {
    let keys = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&keys);
    let charge = Tool::builder("charge", "Charges a card.")
        .handler(move |ctx: Context, _args: Args| {
            seen.lock()
                .expect("not poisoned")
                .push(ctx.idempotency_key());
            async move { Ok::<_, std::io::Error>("charged") }
        })
        .build();
    (charge, keys)
}

#[tokio::test]
async fn w2_a_call_cut_mid_way_runs_again_with_the_same_idempotency_key() {
    let (charge, keys) = key_recorder();
    let turns = || {
        vec![
            ScriptedTurn::new().call("c1", "charge", "{}"),
            ScriptedTurn::reply("paid"),
        ]
    };
    /// Runs each step, then dies before recording the call's result.
    struct DiesAfterTheCall(MemoryJournal);
    impl Journal for DiesAfterTheCall {
        fn run_id(&self) -> &str {
            self.0.run_id()
        }
        fn step<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Result<Value, JournalError>> {
            if matches!(step.kind(), StepKind::Call { .. }) {
                let name = step.kind().to_string();
                return Box::pin(async move {
                    let _ = step.into_future().await;
                    Err(JournalError::new(name, "the process died"))
                });
            }
            self.0.step(step)
        }
    }
    let journal = MemoryJournal::new("run-w2");
    let agent = tool_runtime::Agent::builder(ScriptedModel::new(turns()))
        .tool(charge.clone())
        .build()
        .expect("built");
    let cut = DiesAfterTheCall(journal.clone());
    let error = agent
        .execute(&Context::new(), RunRequest::new("Pay").journal(&cut))
        .await
        .expect_err("the process dies after the call ran");
    assert_eq!(error.kind(), ErrorKind::Journal, "{error:#}");
    let agent = tool_runtime::Agent::builder(ScriptedModel::new(turns().into_iter().skip(1)))
        .tool(charge)
        .build()
        .expect("built");
    let output = agent
        .execute(
            &Context::new(),
            RunRequest::new("Pay").journal(&journal.replay()),
        )
        .await
        .expect("the replay ends");
    assert_eq!(output.text, "paid");
    let keys = keys.lock().expect("not poisoned").clone();
    assert_eq!(
        keys,
        [
            Some("run-w2/1.0/c1".to_owned()),
            Some("run-w2/1.0/c1".to_owned())
        ]
    );
}

#[tokio::test]
async fn w3_a_paused_durable_run_resumes_in_its_journal_and_replays_whole() {
    let turns = || {
        vec![
            ScriptedTurn::new().call("c1", "restart", r#"{"service_id":"prod-db"}"#),
            ScriptedTurn::reply("restarted"),
        ]
    };
    let fixture = Fixture::new();
    let journal = MemoryJournal::new("run-w3");
    let agent = fixture.agent(ScriptedModel::new(turns()), None);
    let paused = agent
        .execute(
            &admin(),
            RunRequest::new("Restart prod-db").journal(&journal),
        )
        .await
        .expect_err("the run pauses")
        .into_paused()
        .expect("a paused run");
    assert_eq!(paused.run_id(), "run-w3");
    let approve = || Decisions::new().decide("c1", Decision::Approve);
    let output = agent
        .execute(
            &admin(),
            RunRequest::resume(paused, approve()).journal(&journal),
        )
        .await
        .expect("the resumed run ends");
    assert_eq!(output.text, "restarted");
    assert_eq!(fixture.restarted(), ["prod-db"]);

    // The whole run again from the journal (a worker restarted after it ended): the same
    // pause, the same end, and nothing runs.
    let again = Fixture::new();
    let agent = again.agent(ScriptedModel::new([]), None);
    let replay = journal.replay();
    let paused = agent
        .execute(
            &admin(),
            RunRequest::new("Restart prod-db").journal(&replay),
        )
        .await
        .expect_err("the same pause")
        .into_paused()
        .expect("a paused run");
    let output = agent
        .execute(
            &admin(),
            RunRequest::resume(paused, approve()).journal(&replay),
        )
        .await
        .expect("the same end");
    assert_eq!(output.text, "restarted");
    assert!(again.restarted().is_empty());
    assert_eq!(journal.ran(), journal.steps().len());
}

#[derive(tool_runtime::Schema, Debug)]
struct Verdict {
    /// Whether it is done.
    done: bool,
}

/// W1 with a typed answer (O2): the final-answer turn is a step like any other, and a
/// replay reads the same answer without asking the model.
#[tokio::test]
async fn w1_a_typed_answer_replays_from_the_journal() {
    let turns = || vec![ScriptedTurn::new().call("a1", "final_answer", r#"{"done":true}"#)];
    let journal = MemoryJournal::new("run-typed");
    let agent = tool_runtime::Agent::builder(ScriptedModel::new(turns()))
        .build()
        .expect("built");
    let typed = agent
        .execute(
            &Context::new(),
            RunRequest::new("Done?")
                .typed::<Verdict>()
                .journal(&journal),
        )
        .await
        .expect("a typed answer");
    assert!(typed.value.done);
    let agent = tool_runtime::Agent::builder(ScriptedModel::new([]))
        .build()
        .expect("built");
    let again = agent
        .execute(
            &Context::new(),
            RunRequest::new("Done?")
                .typed::<Verdict>()
                .journal(&journal.replay()),
        )
        .await
        .expect("the same answer, replayed");
    assert!(again.value.done);
    assert_eq!(journal.ran(), journal.steps().len());
}

/// L1 in a durable run: a tool that asks the model to try again counts toward its retry
/// budget, in the run that made the calls and in a replay of it, as in a run in one process.
#[tokio::test]
async fn w1_l1_a_retry_budget_ends_a_journaled_run_as_it_ends_a_plain_one() {
    let picky = || {
        Tool::builder("picky", "Always asks for another try.")
            .handler(|_ctx: Context, _args: Args| async move {
                Err::<String, _>(tool_runtime::ToolError::retry("try again"))
            })
            .build()
    };
    let turns = || {
        (1..=3)
            .map(|i| ScriptedTurn::new().call(format!("p{i}"), "picky", "{}"))
            .chain([ScriptedTurn::reply("done")])
            .collect::<Vec<_>>()
    };
    let agent = |turns: Vec<ScriptedTurn>| {
        tool_runtime::Agent::builder(ScriptedModel::new(turns))
            .tool(picky())
            .retries(1)
            .build()
            .expect("built")
    };
    let plain = agent(turns())
        .run(&Context::new(), "Go")
        .await
        .expect_err("the budget ends the run");
    assert_eq!(plain.kind(), ErrorKind::RetriesExhausted);
    let journal = MemoryJournal::new("run-l1");
    let journaled = agent(turns())
        .execute(&Context::new(), RunRequest::new("Go").journal(&journal))
        .await
        .expect_err("the budget ends the journaled run");
    assert_eq!(
        journaled.kind(),
        ErrorKind::RetriesExhausted,
        "{journaled:#}"
    );
    // E3: the run that made the calls keeps their errors as they were.
    assert!(
        journaled.calls().iter().all(|c| c
            .error()
            .is_some_and(|e| e.message() != tool_runtime::RECORDED_ERROR)),
        "{:?}",
        journaled.calls()
    );
    let replayed = agent(Vec::new())
        .execute(
            &Context::new(),
            RunRequest::new("Go").journal(&journal.replay()),
        )
        .await
        .expect_err("the replay ends the same way");
    assert_eq!(replayed.kind(), ErrorKind::RetriesExhausted);
}

/// W2: two calls never share a key, even when a model reuses a call id in a later turn.
#[tokio::test]
async fn w2_a_call_id_reused_in_a_later_turn_gets_its_own_key() {
    let (charge, keys) = key_recorder();
    let agent = tool_runtime::Agent::builder(ScriptedModel::new([
        ScriptedTurn::new().call("call_0", "charge", "{}"),
        ScriptedTurn::new().call("call_0", "charge", "{}"),
        ScriptedTurn::reply("paid twice"),
    ]))
    .tool(charge)
    .build()
    .expect("built");
    let journal = MemoryJournal::new("run/x");
    agent
        .execute(
            &Context::new(),
            RunRequest::new("Pay twice").journal(&journal),
        )
        .await
        .expect("runs");
    let keys = keys.lock().expect("not poisoned").clone();
    assert_eq!(
        keys,
        [
            Some("run%2Fx/1.0/call_0".to_owned()),
            Some("run%2Fx/2.0/call_0".to_owned())
        ]
    );
}
