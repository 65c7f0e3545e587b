//! U1: the one way into a call keeps, for every transport's seam, what a call must keep:
//! approval asked of the seam and an unapproved call never run (H6), a paused call left
//! awaiting approval, a question that ends the call, cancellation that awaits the handler
//! (P2).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use tool_core::hook::Transport;
use tool_core::violation::ParseCx;
use tool_core::{
    Approval as Needed, BoxError, CancellationToken, Context, Hooks, Limits, Outcome, OutcomeKind,
    Tool,
};

use super::*;

/// A tool that counts its runs and needs approval when `approval` says so.
fn counted(runs: &Arc<AtomicUsize>, approval: bool) -> Tool {
    let runs = Arc::clone(runs);
    let builder = Tool::builder("restart", "Restarts a service.").dynamic_handler(
        serde_json::json!({"type": "object"}),
        |_: &Value, _: &mut ParseCx| {},
        move |_, args: Value| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, BoxError>(args) }
        },
    );
    let builder = if approval {
        builder.approval_fn(|_: &Context, _: &Value| {
            Ok::<_, std::convert::Infallible>(Needed::required("restarts production"))
        })
    } else {
        builder
    };
    builder.build()
}

/// A tool that waits for its call's cancellation, then counts its end.
fn waiting(ended: &Arc<AtomicUsize>) -> Tool {
    let ended = Arc::clone(ended);
    Tool::builder("wait", "Waits for its cancellation.")
        .dynamic_handler(
            serde_json::json!({"type": "object"}),
            |_: &Value, _: &mut ParseCx| {},
            move |ctx: Context, _: Value| {
                let ended = Arc::clone(&ended);
                async move {
                    ctx.cancelled().await;
                    ended.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, BoxError>(Value::Null)
                }
            },
        )
        .build()
}

fn facts() -> Facts<'static> {
    Facts {
        via: Via::Stdio,
        protocol: None,
        task: false,
        round: false,
    }
}

/// A seam that answers every approval question with `answer`, or ends the call with a
/// question when `interrupts`.
struct Answering {
    answer: fn() -> Approval<&'static str>,
    asked: AtomicUsize,
    interrupts: bool,
}

impl Seam for Answering {
    type Held = &'static str;

    async fn approve(&self, awaiting: &Outcome) -> Approval<&'static str> {
        assert_eq!(awaiting.kind(), OutcomeKind::AwaitingApproval);
        self.asked.fetch_add(1, Ordering::SeqCst);
        (self.answer)()
    }

    fn interrupts(&self) -> bool {
        self.interrupts
    }

    async fn asked(&self) {}

    fn held(&self, _approved: bool, _args: &[u8]) -> Entered<&'static str> {
        Entered::Held("the question")
    }
}

fn seam(answer: fn() -> Approval<&'static str>) -> Answering {
    Answering {
        answer,
        asked: AtomicUsize::new(0),
        interrupts: false,
    }
}

async fn entered<S: Seam>(tool: &Tool, approved: bool, seam: &S) -> Entered<S::Held> {
    let (ctx, hooks, limits) = (
        Context::new(),
        Hooks::new(Transport::Mcp),
        Limits::default(),
    );
    let request = CallRequest {
        tool,
        ctx: &ctx,
        args: b"{}",
        hooks: &hooks,
        limits: &limits,
        approved,
        cancelled: None,
        facts: facts(),
    };
    enter(&request, seam).await
}

fn outcome<H>(entered: Entered<H>) -> Outcome {
    match entered {
        Entered::Outcome(outcome) => outcome,
        Entered::Held(_) => panic!("the call was held"),
    }
}

#[tokio::test]
async fn u1_h6_a_call_awaiting_approval_asks_the_seam_and_runs_once_approved() {
    let runs = Arc::new(AtomicUsize::new(0));
    let tool = counted(&runs, true);
    let approving = seam(|| Approval::Approved);
    let done = outcome(entered(&tool, false, &approving).await);
    assert_eq!(done.kind(), OutcomeKind::Success, "{}", done.text());
    assert_eq!(approving.asked.load(Ordering::SeqCst), 1);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn u1_h6_a_refused_call_never_runs_and_ends_with_the_seams_outcome() {
    let runs = Arc::new(AtomicUsize::new(0));
    let tool = counted(&runs, true);
    let refusing = seam(|| Approval::Refused(Outcome::not_approved()));
    let done = outcome(entered(&tool, false, &refusing).await);
    assert_eq!(done.text(), Outcome::not_approved().text());
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // A question that goes back in the answer ends the call unrun, too.
    let holding = seam(|| Approval::Held("asked in the answer"));
    let held = entered(&tool, false, &holding).await;
    assert!(matches!(held, Entered::Held("asked in the answer")));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn u1_a_pausing_seam_leaves_the_call_awaiting_approval_and_an_approved_one_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let tool = counted(&runs, true);
    let paused = outcome(entered(&tool, false, &Pausing).await);
    assert_eq!(paused.kind(), OutcomeKind::AwaitingApproval);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // Approved before it came (a decision, or a round that approved it): not asked again.
    let asking = seam(|| panic!("an approved call is not asked again"));
    let done = outcome(entered(&tool, true, &asking).await);
    assert_eq!(done.kind(), OutcomeKind::Success, "{}", done.text());
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn u1_m3_p2_a_question_of_the_handler_ends_the_call_once_its_handler_ended() {
    let ended = Arc::new(AtomicUsize::new(0));
    let tool = waiting(&ended);
    let interrupting = Answering {
        interrupts: true,
        ..seam(|| Approval::Approved)
    };
    let held = entered(&tool, false, &interrupting).await;
    assert!(matches!(held, Entered::Held("the question")));
    // Its context was cancelled, and the handler awaited to its end (P2).
    assert_eq!(ended.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn u1_p2_the_transports_cancellation_cancels_the_calls_context_and_awaits_it() {
    let ended = Arc::new(AtomicUsize::new(0));
    let tool = waiting(&ended);
    let (ctx, hooks, limits) = (
        Context::new(),
        Hooks::new(Transport::Mcp),
        Limits::default(),
    );
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let request = CallRequest {
        tool: &tool,
        ctx: &ctx,
        args: b"{}",
        hooks: &hooks,
        limits: &limits,
        approved: false,
        cancelled: Some(&cancelled),
        facts: facts(),
    };
    let done = outcome(enter(&request, &Pausing).await);
    assert!(ctx.is_cancelled());
    assert_eq!(done.kind(), OutcomeKind::Success, "{}", done.text());
    assert_eq!(ended.load(Ordering::SeqCst), 1);
}
