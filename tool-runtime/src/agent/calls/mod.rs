//! Running the calls of one turn: concurrently, each behind a concurrency slot (R2), each
//! through [`Tool::invoke_with`] on its own call context; a fatal outcome cancels the turn's
//! other calls, which are all joined (P1–P3). In a durable run (`journaled`) each call is a
//! step of the run's journal, and the calls run one at a time in the model's order (W1), or
//! concurrently when the journal takes each call as a step of its own (`parallel`, W9).

mod journaled;
mod parallel;

pub(crate) use journaled::run_calls as run_journaled;

use std::sync::Arc;
use std::time::Duration;

use std::panic::AssertUnwindSafe;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use futures_util::FutureExt;
use futures_util::future::{self, Either};
use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::sync::{Semaphore, TryAcquireError};
use tool_core::{Context, Error, ErrorKind, Hooks, Limits, Outcome, Tool};
use tracing::Instrument;

use super::batch::{Batch, CallsEnd};
use super::cancel::unless_cancelled;
use super::env::Env;
use super::event::{RunEvent, Sink};
use super::output::CallRecord;
use super::shared::Shared;
use super::{progress, spans};
use crate::call::{self, CallRequest, Entered, Facts, Pausing, Via};
use crate::model::ToolCall;

/// Each call's tool, by its index in the agent, when the call may run: A5, A8: a tool this
/// run did not advertise is not callable in it, whatever its policy says now; its policy is
/// not consulted. Each call's tool is looked up once.
pub(crate) fn targets(
    shared: &Shared,
    calls: &[ToolCall],
    advertised: &[bool],
) -> Vec<Option<usize>> {
    calls
        .iter()
        .map(|call| {
            shared
                .set
                .by_name
                .get(&*call.name)
                .copied()
                .filter(|&i| advertised.get(i).copied().unwrap_or(false))
        })
        .collect()
}

/// Runs the calls of `batch` here and now, returning their records in call order and how the
/// turn ended; `targets` holds each call's tool, when it may run (see [`targets`]).
///
/// The calls run concurrently as futures of the run's own task (R2: concurrency, up to the
/// agent's slots), each borrowing its call: no task, join handle or copy of the call's
/// strings per call. A handler that computes for long should hand that work to
/// `tokio::task::spawn_blocking`, as on any async task.
///
/// At resume the batch holds the approved calls of the paused turn: each runs through
/// [`Tool::invoke_approved`] (H4), and records and a fatal end name their positions in that
/// turn.
///
/// # Cancel safety
///
/// Dropping the future drops the calls in flight.
pub(crate) async fn run_live(
    env: Env<'_>,
    batch: Batch<'_>,
    targets: &[Option<usize>],
    turn: usize,
    slots: &Semaphore,
) -> (Vec<CallRecord>, CallsEnd) {
    let Env {
        shared, ctx, sink, ..
    } = env;
    let Batch { calls, .. } = batch;
    let turn_ctx = ctx.child();
    // L4: with a sequential call in the batch, the calls run in steps (see `Steps`).
    let steps = Steps::of(shared, targets);
    let content = shared.set.record_tool_content;
    let ends = Ends::new(turn, batch, &turn_ctx, sink);
    let call = |index: usize| {
        let (call, target) = (&calls[index], targets[index]);
        let call_ctx = turn_ctx
            .for_call(call.id.clone(), call.name.clone())
            .at_position(turn, batch.position(index));
        // K3: a handler's progress goes to the run's stream, if it has one.
        let call_ctx = progress::listen(call_ctx, sink, turn, index, call);
        let tool = target.map(|i| (&shared.set.tools[i], shared.timeouts[i]));
        let span = spans::call(call, tool.map(|(tool, _)| tool.description()), content);
        let step = steps.as_ref().map(|steps| steps.for_call(index));
        let one = One::new(shared, call_ctx, call, tool, slots, batch.approves(index));
        let run = AssertUnwindSafe(async move {
            // The step's guard (in `step`) counts this call done however it ends,
            // dropped included; a call of a later step first waits for the one before.
            if let Some((Some(before), _)) = &step {
                before.wait().await;
            }
            let outcome = one.run().instrument(span.clone()).await;
            drop(one);
            spans::record_call(&span, &outcome, content);
            drop(step);
            outcome
        });
        // `map` rather than an async block awaiting `run`: such a block would hold the call's
        // future twice (as its capture and as the future it awaits).
        run.catch_unwind().map(ends.on_end(index))
    };
    run_all(ctx, calls.len(), call, &ends).await;
    let (outcomes, end) = ends.into_parts();
    (records(turn, batch, outcomes, end), end)
}

/// Runs the futures that `call` makes of the batch's `count` calls, each ending through
/// `ends`, until every call ended or the caller's context is cancelled (P4): then the calls
/// that can end at once do, and the others are dropped.
async fn run_all<F: Future<Output = ()>>(
    ctx: &Context,
    count: usize,
    call: impl Fn(usize) -> F,
    ends: &Ends<'_>,
) {
    // Up to `CHUNK` calls (most turns), their futures in one allocation, each polled in the
    // calls' order whenever the run's task is woken: no allocation, waker or queue node per
    // call. Past it, polling every pending call on each wake would cost the square of the
    // calls a model asked for, so a `FuturesUnordered` polls only the woken ones (a node per
    // call). Either way each call's end is handled as it ends (see `Ends::end`).
    let running = if count <= CHUNK {
        Either::Left(future::join_all((0..count).map(&call)).map(drop))
    } else {
        let calls: FuturesUnordered<F> = (0..count).map(&call).collect();
        Either::Right(calls.for_each(|()| future::ready(())))
    };
    tokio::pin!(running);
    // One wait for the caller's cancellation, for the whole batch.
    let cancelled = ctx.cancelled();
    tokio::pin!(cancelled);
    if unless_cancelled(ctx, cancelled, running.as_mut())
        .await
        .is_none()
    {
        // P4: the call contexts are children of `ctx`, so every call has seen the
        // cancellation; the calls it woke end now if they can (a handler watching its
        // context returns), and what is still in flight is dropped.
        ends.cancelled.store(true, Ordering::Relaxed);
        loop {
            let before = ends.count.load(Ordering::Relaxed);
            if running.as_mut().now_or_never().is_some()
                || ends.count.load(Ordering::Relaxed) == before
            {
                break;
            }
        }
    }
}

/// The most calls whose futures share one allocation, all polled on every wake (`join_all`'s
/// own limit for that form): a bounded cost per wake, whatever the model asks for.
const CHUNK: usize = 30;

/// What the calls of a batch left as they ended: each call's outcome, the first fatal one
/// (P1, P2), and whether the caller cancelled the run (P4).
struct Ends<'a> {
    turn: usize,
    batch: Batch<'a>,
    turn_ctx: &'a Context,
    sink: &'a Sink,
    /// Each call's outcome, once it ended.
    outcomes: Vec<OnceLock<Outcome>>,
    /// How many calls ended.
    count: AtomicUsize,
    /// The position of the first call that failed fatally, if one did before the caller
    /// cancelled.
    fatal: OnceLock<usize>,
    /// Whether the caller's context was cancelled (P4).
    cancelled: AtomicBool,
}

impl<'a> Ends<'a> {
    fn new(turn: usize, batch: Batch<'a>, turn_ctx: &'a Context, sink: &'a Sink) -> Self {
        Ends {
            turn,
            batch,
            turn_ctx,
            sink,
            outcomes: (0..batch.calls.len()).map(|_| OnceLock::new()).collect(),
            count: AtomicUsize::new(0),
            fatal: OnceLock::new(),
            cancelled: AtomicBool::new(false),
        }
    }

    /// Call `index` ended: the first fatal outcome cancels the siblings (P2), which are still
    /// joined; the run's stream hears of it; its outcome is kept.
    fn end(&self, index: usize, ended: std::thread::Result<Outcome>) {
        let outcome = ended.unwrap_or_else(|panic| loop_panicked(&*panic));
        let position = self.batch.position(index);
        if outcome.is_fatal()
            && !self.cancelled.load(Ordering::Relaxed)
            && self.fatal.set(position).is_ok()
        {
            self.turn_ctx.cancellation().cancel();
        }
        if self.sink.is_active() {
            let record = record(
                self.turn,
                position,
                &self.batch.calls[index],
                outcome.clone(),
            );
            self.sink.emit(|| RunEvent::CallFinished(record));
        }
        if let Some(slot) = self.outcomes.get(index) {
            // A call's future ends once: its slot is empty.
            let _ = slot.set(outcome);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// What ends call `index` with what its future gave (a named function's opaque type: a
    /// closure written in place would not be seen to take a panic's payload of any lifetime).
    fn on_end(&self, index: usize) -> impl FnOnce(std::thread::Result<Outcome>) + '_ {
        move |ended| self.end(index, ended)
    }

    /// Each call's outcome, if it ended, and how the batch ended.
    fn into_parts(self) -> (Vec<Option<Outcome>>, CallsEnd) {
        let end = if self.cancelled.into_inner() {
            CallsEnd::Cancelled
        } else {
            self.fatal
                .into_inner()
                .map_or(CallsEnd::Done, CallsEnd::Fatal)
        };
        let outcomes = self
            .outcomes
            .into_iter()
            .map(OnceLock::into_inner)
            .collect();
        (outcomes, end)
    }
}

/// A panic of the loop's own code around a call (a bug: `invoke` contains the handler's
/// panics), kept to the call.
fn loop_panicked(panic: &(dyn std::any::Any + Send)) -> Outcome {
    Outcome::failure(Error::new(
        ErrorKind::Panic,
        format!(
            "the code running the call panicked: {}",
            tool_core::panic::message(panic)
        ),
    ))
}

/// The records of `batch`'s calls, in call order, from their outcomes; a call without one
/// was dropped when the batch ended as `end`.
fn records(
    turn: usize,
    batch: Batch<'_>,
    outcomes: Vec<Option<Outcome>>,
    end: CallsEnd,
) -> Vec<CallRecord> {
    let dropped = if end == CallsEnd::Cancelled {
        "the run was cancelled; the call was dropped"
    } else {
        "the call was dropped before it ended"
    };
    batch
        .calls
        .iter()
        .zip(outcomes)
        .enumerate()
        .map(|(index, (call, outcome))| {
            let outcome = outcome
                .unwrap_or_else(|| Outcome::cancelled(Error::new(ErrorKind::Cancelled, dropped)));
            record(turn, batch.position(index), call, outcome)
        })
        .collect()
}

/// The steps of a batch that holds a sequential call (L4): a sequential call is a step of its
/// own, and the calls between two sequential ones are one step; each step starts when the
/// one before it has ended, so a sequential call runs with no other call in flight, in the
/// model's order relative to the others.
struct Steps {
    /// The step of each call.
    step_of: Vec<usize>,
    /// Each step's count of calls still to end.
    steps: Vec<Arc<StepDone>>,
}

impl Steps {
    /// The steps of the calls of these tools (each call's tool index, if it is callable), or
    /// `None` when none of them is a call of a sequential tool
    /// (the usual case: every call runs at once, as before).
    fn of(shared: &Shared, targets: &[Option<usize>]) -> Option<Steps> {
        let sequential =
            |target: &Option<usize>| target.is_some_and(|i| shared.set.tools[i].is_sequential());
        if !targets.iter().any(sequential) {
            return None;
        }
        let sequential = targets.iter().map(sequential);
        let mut step_of = Vec::with_capacity(targets.len());
        let mut sizes: Vec<usize> = Vec::new();
        let mut open = false;
        for alone in sequential {
            if alone || !open {
                sizes.push(0);
            }
            open = !alone;
            if let Some(size) = sizes.last_mut() {
                *size += 1;
            }
            step_of.push(sizes.len() - 1);
        }
        let steps = sizes
            .into_iter()
            .map(|size| {
                Arc::new(StepDone {
                    left: std::sync::atomic::AtomicUsize::new(size),
                    ended: tokio::sync::Notify::new(),
                })
            })
            .collect();
        Some(Steps { step_of, steps })
    }

    /// What call `index` waits for (the step before its own, if any), and the guard that
    /// counts it done in its own step.
    fn for_call(&self, index: usize) -> (Option<Arc<StepDone>>, StepGuard) {
        let step = self.step_of[index];
        let before = step
            .checked_sub(1)
            .map(|before| Arc::clone(&self.steps[before]));
        (before, StepGuard(Arc::clone(&self.steps[step])))
    }
}

/// How many calls of one step are still to end, and the notice that they all have.
struct StepDone {
    left: std::sync::atomic::AtomicUsize,
    ended: tokio::sync::Notify,
}

impl StepDone {
    /// Waits until every call of this step has ended.
    async fn wait(&self) {
        loop {
            let ended = self.ended.notified();
            tokio::pin!(ended);
            ended.as_mut().enable();
            if self.left.load(std::sync::atomic::Ordering::Acquire) == 0 {
                return;
            }
            ended.await;
        }
    }
}

/// Counts a call of a step done when dropped, whatever ended it.
struct StepGuard(Arc<StepDone>);

impl Drop for StepGuard {
    fn drop(&mut self) {
        if self
            .0
            .left
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel)
            == 1
        {
            self.0.ended.notify_waiters();
        }
    }
}

/// The record of call `call`, at position `index` of turn `turn`.
pub(crate) fn record(turn: usize, index: usize, call: &ToolCall, outcome: Outcome) -> CallRecord {
    CallRecord {
        turn,
        index,
        id: call.id.clone(),
        name: call.name.clone(),
        arguments: call.arguments.clone(),
        outcome,
        repaired_from: None,
    }
}

/// One call: a slot, then the pipeline, under the tool's timeout.
struct One<'a> {
    ctx: Context,
    /// The tool and its timeout, if the call names a tool this run advertised.
    tool: Option<(&'a Tool, Option<Duration>)>,
    arguments: &'a [u8],
    limits: &'a Limits,
    slots: &'a Semaphore,
    approved: bool,
    hooks: &'a Hooks,
}

impl<'a> One<'a> {
    /// Call `call` on its context `ctx`, of `tool` (with its timeout) if the run may call it.
    fn new(
        shared: &'a Shared,
        ctx: Context,
        call: &'a ToolCall,
        tool: Option<(&'a Tool, Option<Duration>)>,
        slots: &'a Semaphore,
        approved: bool,
    ) -> Self {
        One {
            ctx,
            tool,
            arguments: call.arguments.as_bytes(),
            limits: &shared.set.limits,
            slots,
            approved,
            hooks: &shared.set.hooks,
        }
    }

    /// Runs the call. It borrows `self`, which the caller keeps in place: the call's future
    /// holds no second copy of it. The rare paths (waiting for a slot, a timeout) are boxed,
    /// so that the usual call's future stays small.
    async fn run(&self) -> Outcome {
        // A free slot is taken at once; otherwise the call waits for one, or for
        // cancellation.
        let _permit = match self.slots.try_acquire() {
            Ok(permit) => permit,
            Err(TryAcquireError::Closed) => return not_started(),
            Err(TryAcquireError::NoPermits) => match Box::pin(self.wait_for_slot()).await {
                Some(permit) => permit,
                None => return not_started(),
            },
        };
        if self.ctx.is_cancelled() {
            return not_started();
        }
        // A5: a name the agent does not hold gets the same answer as a tool this run did not
        // advertise. An advertised tool goes through `invoke_with`, whose availability
        // re-check decides (A4: a capability revoked mid-run blocks the call).
        let Some((tool, timeout)) = self.tool else {
            tracing::debug!("the model called a tool this run did not advertise");
            return Outcome::unavailable();
        };
        let outcome = match timeout {
            None => self.invoke(tool).await,
            Some(limit) => Box::pin(self.timed(tool, limit)).await,
        };
        tracing::debug!(outcome = %outcome.kind(), "tool call ended");
        outcome
    }

    /// Waits for a slot, or for the call's cancellation (`None`).
    async fn wait_for_slot(&self) -> Option<tokio::sync::SemaphorePermit<'a>> {
        let slots = self.slots;
        tokio::select! {
            biased;
            () = self.ctx.cancelled() => None,
            permit = slots.acquire() => permit.ok(),
        }
    }

    /// The call of `tool` through the one way into a call (U1): its hooks around its handler
    /// (K1; without hooks, a branch), a call awaiting approval left so for the run to pause on
    /// (H2).
    async fn invoke(&self, tool: &Tool) -> Outcome {
        let request = CallRequest {
            tool,
            ctx: &self.ctx,
            args: self.arguments,
            hooks: self.hooks,
            limits: self.limits,
            approved: self.approved,
            cancelled: None,
            facts: Facts {
                via: Via::Agent,
                protocol: None,
                task: false,
                round: false,
            },
        };
        match call::enter(&request, &Pausing).await {
            Entered::Outcome(outcome) => outcome,
            Entered::Held(never) => match never {},
        }
    }

    /// The call of `tool` under its timeout `limit`.
    async fn timed(&self, tool: &Tool, limit: Duration) -> Outcome {
        match tokio::time::timeout(limit, self.invoke(tool)).await {
            Ok(outcome) => outcome,
            Err(_) => {
                // The handler's future is dropped; cancel the call's token too, for
                // anything it started that watches it.
                self.ctx.cancellation().cancel();
                let error = Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "tool `{}` ran past its timeout of {limit:?} and was dropped",
                        tool.name()
                    ),
                );
                tracing::warn!(
                    error = %error,
                    "tool call timed out; the model is told only that it timed out"
                );
                Outcome::timed_out(error)
            }
        }
    }
}

fn not_started() -> Outcome {
    Outcome::cancelled(Error::new(
        ErrorKind::Cancelled,
        "the call was cancelled before it started",
    ))
}
