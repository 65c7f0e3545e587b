//! A durable run's sub-agents (B2, W1, W2, W3): the steps of a sub-agent's run are steps of
//! its parent's journal, named under the call that started it, so that a run cut at any step,
//! a sub-agent's included, goes on from its journal with each effect once. Shown with the
//! journal in memory over three levels (top, manager, payer); the Restate journal of
//! `tool-durable` is tested against a real server there, with its worker killed mid-child.
mod support {
    pub mod compose;
    pub mod journal;
}

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context as TaskContext, Poll};

use support::compose::{ASKED, Ledger, agents, plain_transfer, scripts};
use support::journal::Dies;
use tool_runtime::journal::{Journal, MemoryJournal, StepKind};
use tool_runtime::model::{ModelError, ModelEvent, ModelRequest, ModelStream};
use tool_runtime::{
    Agent, Context, ConversationModel, Decision, Decisions, ErrorKind, Model, PendingKind,
    RunOutput, RunRequest,
};

fn names(journal: &MemoryJournal) -> Vec<String> {
    journal.steps().iter().map(|(k, _)| k.to_string()).collect()
}

/// The three levels run straight (no approval) on `journal`, by freshly built agents.
async fn straight(
    journal: &dyn Journal,
    ledger: &Ledger,
) -> Result<RunOutput, tool_runtime::RunError> {
    let top = agents(scripts(ASKED), ledger, true);
    top.execute(
        &Context::new(),
        RunRequest::new("Settle acme").journal(journal),
    )
    .await
}

#[tokio::test]
async fn b2_w1_a_durable_parent_journals_its_sub_agents_steps_under_the_calls_that_started_them() {
    let ledger = Ledger::new();
    let journal = MemoryJournal::new("run-b2");
    let output = straight(&journal, &ledger).await.expect("the run ends");
    assert_eq!(output.text, "all settled");
    assert_eq!(ledger.entries(), ["transfer:acme:90000"]);
    let manager = "call t1 manager";
    let payer = "call t1 manager > call m1 payer";
    assert_eq!(
        names(&journal),
        [
            "discovery".to_owned(),
            "request 1".to_owned(),
            format!("{manager} > discovery"),
            format!("{manager} > request 1"),
            format!("{payer} > discovery"),
            format!("{payer} > request 1"),
            format!("{payer} > call i1 transfer"),
            format!("{payer} > request 2"),
            payer.to_owned(),
            format!("{manager} > request 2"),
            manager.to_owned(),
            "request 2".to_owned(),
        ]
    );
    assert!(matches!(
        &journal.steps()[2].0,
        StepKind::Nested { id, tool, .. } if id == "t1" && tool == "manager"
    ));
    assert_eq!(journal.ran(), journal.steps().len());
}

#[tokio::test]
async fn b2_w1_a_durable_nested_run_cut_at_any_step_goes_on_from_its_journal_and_pays_once() {
    let whole = MemoryJournal::new("run-b2");
    let straight_output = straight(&whole, &Ledger::new()).await.expect("uncut");
    let steps = whole.steps().len();
    for cut in 0..steps {
        // The first process dies before step `cut` is recorded, wherever it is.
        let first = Ledger::new();
        let journal = MemoryJournal::new("run-b2");
        let dies = Dies {
            inner: journal.clone(),
            cut,
        };
        let error = straight(&dies, &first).await.expect_err("the process dies");
        assert_eq!(error.kind(), ErrorKind::Journal, "cut {cut}: {error:#}");
        // The second process: new agents, the same journal.
        let second = Ledger::new();
        let output = straight(&journal.replay(), &second)
            .await
            .unwrap_or_else(|e| panic!("cut {cut}: the run goes on: {e:#}"));
        assert_eq!(output.text, straight_output.text, "cut {cut}");
        assert_eq!(output.transcript, straight_output.transcript, "cut {cut}");
        assert_eq!(output.usage, straight_output.usage, "cut {cut}");
        // The payment once in all, every step taken once, the same journal as uncut.
        let mut paid = first.entries();
        paid.extend(second.entries());
        assert_eq!(paid, ["transfer:acme:90000"], "cut {cut}");
        assert_eq!(journal.ran(), steps, "cut {cut}");
        assert_eq!(journal.steps(), whole.steps(), "cut {cut}");
    }
}

#[tokio::test]
async fn b2_w3_a_durable_run_paused_deep_in_a_sub_agent_resumes_in_its_journal_and_replays_whole() {
    let ledger = Ledger::new();
    let journal = MemoryJournal::new("run-b2-pause");
    let top = agents(scripts(ASKED), &ledger, false);
    let request = || RunRequest::new("Settle acme");
    let paused = top
        .execute(&Context::new(), request().journal(&journal))
        .await
        .expect_err("the run pauses")
        .into_paused()
        .expect("a paused run");
    assert_eq!(paused.pending()[0].kind(), PendingKind::Nested);
    assert!(ledger.entries().is_empty());
    let approve = || Decisions::new().decide_at(["t1", "m1", "i1"], Decision::Approve);
    // Resumed by freshly built agents, on the same journal.
    let top = agents(scripts(ASKED), &ledger, false);
    let output = top
        .execute(
            &Context::new(),
            RunRequest::resume(paused, approve()).journal(&journal),
        )
        .await
        .expect("the resumed run ends");
    assert_eq!(output.text, "all settled");
    assert_eq!(ledger.entries(), ["transfer:acme:90000"]);
    let steps = journal.steps().len();

    // The whole run again from its journal (a worker restarted after it ended): the same
    // pause, the same end, nothing taken again.
    let again = Ledger::new();
    let top = agents(scripts(ASKED), &again, false);
    let replay = journal.replay();
    let paused = top
        .execute(&Context::new(), request().journal(&replay))
        .await
        .expect_err("the same pause")
        .into_paused()
        .expect("a paused run");
    let output = top
        .execute(
            &Context::new(),
            RunRequest::resume(paused, approve()).journal(&replay),
        )
        .await
        .expect("the same end");
    assert_eq!(output.text, "all settled");
    assert!(again.entries().is_empty(), "{:?}", again.entries());
    assert_eq!(journal.steps().len(), steps);
    assert_eq!(journal.ran(), steps);
}

/// The payer's model in a process killed while the payer runs: its second request (after its
/// transfer) never answers, and `killed` says the process is gone.
struct KilledMidChild {
    inner: ConversationModel,
    asked: AtomicUsize,
    killed: Arc<AtomicBool>,
}

/// A reply that never comes.
struct Never;

impl futures_core::Stream for Never {
    type Item = Result<ModelEvent, ModelError>;

    fn poll_next(self: Pin<&mut Self>, _cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        Poll::Pending
    }
}

impl Model for KilledMidChild {
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        if self.asked.fetch_add(1, Ordering::SeqCst) == 1 {
            self.killed.store(true, Ordering::SeqCst);
            return Box::pin(Never);
        }
        self.inner.stream(request)
    }
}

/// The three levels with the payer's model `payer`.
fn with_payer(payer: impl Model, ledger: &Ledger) -> Agent {
    let [top, middle, _] = scripts(ASKED);
    let payer = Agent::builder(payer)
        .tool(plain_transfer(ledger))
        .build()
        .expect("builds");
    let manager = Agent::builder(middle)
        .agent_tool(payer.as_tool("payer", "Pays accounts."))
        .build()
        .expect("builds");
    Agent::builder(top)
        .agent_tool(manager.as_tool("manager", "Manages payments."))
        .build()
        .expect("builds")
}

#[tokio::test]
async fn b2_w1_a_process_killed_mid_child_after_its_effect_pays_once_in_all() {
    let whole = MemoryJournal::new("run-b2-kill");
    straight(&whole, &Ledger::new()).await.expect("uncut");

    // The first process pays, then dies while its payer waits on the model: its run is
    // dropped where it stands, as a killed process stops.
    let first = Ledger::new();
    let killed = Arc::new(AtomicBool::new(false));
    let [_, _, payer] = scripts(ASKED);
    let model = KilledMidChild {
        inner: payer,
        asked: AtomicUsize::new(0),
        killed: Arc::clone(&killed),
    };
    let journal = MemoryJournal::new("run-b2-kill");
    let top = with_payer(model, &first);
    let ctx = Context::new();
    let run = top.execute(&ctx, RunRequest::new("Settle acme").journal(&journal));
    let dead = async {
        while !killed.load(Ordering::SeqCst) {
            tokio::task::yield_now().await;
        }
    };
    tokio::select! {
        biased;
        () = dead => {}
        ended = run => panic!("the run was to be killed: {ended:?}"),
    }
    assert_eq!(first.entries(), ["transfer:acme:90000"]);

    // The second process replays the journal: the payment is recorded, so it is not made
    // again, and the run ends as it does uncut.
    let second = Ledger::new();
    let output = straight(&journal.replay(), &second)
        .await
        .expect("the run goes on");
    assert_eq!(output.text, "all settled");
    assert!(
        second.entries().is_empty(),
        "paid again: {:?}",
        second.entries()
    );
    assert_eq!(journal.steps(), whole.steps());
}

/// A model that waits `delay` before each answer of `inner`'s.
struct Slow {
    inner: ConversationModel,
    delay: std::time::Duration,
}

impl Model for Slow {
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let delay = self.delay;
        let inner = self.inner.stream(request);
        Box::pin(async_stream_of(delay, inner))
    }
}

/// `inner`'s events, after `delay`.
fn async_stream_of<'a>(
    delay: std::time::Duration,
    inner: ModelStream<'a>,
) -> impl futures_core::Stream<Item = Result<ModelEvent, ModelError>> + Send + 'a {
    struct Delayed<'a> {
        sleep: Pin<Box<tokio::time::Sleep>>,
        inner: ModelStream<'a>,
    }
    impl futures_core::Stream for Delayed<'_> {
        type Item = Result<ModelEvent, ModelError>;
        fn poll_next(
            mut self: Pin<&mut Self>,
            cx: &mut TaskContext<'_>,
        ) -> Poll<Option<Self::Item>> {
            if self.sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.inner.as_mut().poll_next(cx)
        }
    }
    Delayed {
        sleep: Box::pin(tokio::time::sleep(delay)),
        inner,
    }
}

#[tokio::test]
async fn b2_w1_a_durable_sub_agents_run_is_bounded_by_its_limits_not_the_tools_timeout() {
    let ledger = Ledger::new();
    let [top, middle, _] = scripts(ASKED);
    let [_, _, payer] = scripts(ASKED);
    let slow = Slow {
        inner: payer,
        delay: std::time::Duration::from_millis(30),
    };
    let payer = Agent::builder(slow)
        .tool(plain_transfer(&ledger))
        .build()
        .expect("builds");
    let manager = Agent::builder(middle)
        .agent_tool(payer.as_tool("payer", "Pays accounts."))
        .tool_timeout("payer", std::time::Duration::from_millis(10))
        .build()
        .expect("builds");
    let top = Agent::builder(top)
        .agent_tool(manager.as_tool("manager", "Manages payments."))
        .build()
        .expect("builds");
    let journal = MemoryJournal::new("run-b2-timeout");
    let output = top
        .execute(
            &Context::new(),
            RunRequest::new("Settle acme").journal(&journal),
        )
        .await
        .expect("the run ends");
    // The payer's 60 ms outlast its tool's 10 ms timeout: a clock the journal does not hold
    // decides nothing in a durable run, so the payment went through and replays the same.
    assert_eq!(output.text, "all settled");
    assert_eq!(ledger.entries(), ["transfer:acme:90000"]);
    let again = straight(&journal.replay(), &Ledger::new())
        .await
        .expect("replays");
    assert_eq!(again.transcript, output.transcript);
}
