//! Running the calls of one turn: concurrently, each behind a concurrency slot (R2), each
//! through [`Tool::invoke_with`] on its own call context; a fatal outcome cancels the turn's
//! other calls, which are all joined (P1–P3).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::{self, JoinSet};
use tool_core::{Context, Error, ErrorKind, Hooks, Limits, Outcome, Tool};
use tracing::Instrument;

use super::event::{RunEvent, Sink};
use super::output::CallRecord;
use super::shared::Shared;
use super::{progress, spans};
use crate::model::ToolCall;

/// The calls to run: those of a model turn, or at resume the approved calls of the paused
/// turn, with the position of each in that turn (H4).
#[derive(Clone, Copy)]
pub(crate) struct Batch<'a> {
    calls: &'a [ToolCall],
    approved: Option<&'a [usize]>,
}

impl<'a> Batch<'a> {
    /// The calls of a model turn.
    pub(crate) fn turn(calls: &'a [ToolCall]) -> Self {
        Self {
            calls,
            approved: None,
        }
    }

    /// Approved calls of a paused turn, at these positions in it.
    pub(crate) fn approved(calls: &'a [ToolCall], positions: &'a [usize]) -> Self {
        Self {
            calls,
            approved: Some(positions),
        }
    }
}

/// How the calls of a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallsEnd {
    /// Every call ended; none was fatal.
    Done,
    /// The call at this position failed fatally first (P1, A6, E4); the others were
    /// cancelled and joined.
    Fatal(usize),
    /// The caller's context was cancelled (P4); the calls in flight were dropped.
    Cancelled,
}

/// Runs `calls`, returning their records in call order and how the turn ended. `advertised`
/// says, for each tool the agent holds, whether this run advertised it: only those are
/// callable in the run (A5, A8).
///
/// At resume the batch holds the approved calls of the paused turn: each runs through
/// [`Tool::invoke_approved`] (H4), and records and a fatal end name their positions in that
/// turn.
///
/// # Cancel safety
///
/// Dropping the future aborts the calls in flight (their futures are dropped).
pub(crate) async fn run_calls(
    shared: &Shared,
    ctx: &Context,
    batch: Batch<'_>,
    advertised: &[bool],
    turn: usize,
    slots: &Arc<Semaphore>,
    sink: &Sink,
) -> (Vec<CallRecord>, CallsEnd) {
    let Batch { calls, approved } = batch;
    let position = |index: usize| match approved {
        None => index,
        Some(positions) => positions.get(index).copied().unwrap_or(index),
    };
    let turn_ctx = ctx.child();
    // L4: with a sequential call in the batch, the calls run in steps (see `Steps`).
    let steps = Steps::of(shared, calls, advertised);
    let mut set = JoinSet::new();
    // The task ids, in call order: a task that did not return is found by its id (a linear
    // search, on that path only); the others return their index with their outcome.
    let mut ids: Vec<task::Id> = Vec::with_capacity(calls.len());
    for (index, call) in calls.iter().enumerate() {
        let call_ctx = turn_ctx.for_call(call.id.clone(), call.name.clone());
        // K3: a handler's progress goes to the run's stream, if it has one.
        let call_ctx = progress::listen(call_ctx, sink, turn, index, call);
        // A5, A8: a tool this run did not advertise is not callable in it, whatever its
        // policy says now; its policy is not consulted.
        let target = shared
            .by_name
            .get(&call.name)
            .filter(|&&i| advertised.get(i).copied().unwrap_or(false))
            .map(|&i| (shared.tools[i].clone(), shared.timeouts[i]));
        let content = shared.record_tool_content;
        let span = spans::call(call, content);
        let work = run_one(
            call_ctx,
            target,
            call.arguments.clone(),
            shared.limits,
            Arc::clone(slots),
            approved.is_some(),
            shared.hooks.clone(),
        );
        let step = steps.as_ref().map(|steps| steps.for_call(index));
        let handle = set.spawn(async move {
            let outcome = match step {
                None => work.instrument(span.clone()).await,
                Some((before, done)) => {
                    // Counts this call done however it ends (aborted or dropped included).
                    let _done = done;
                    if let Some(before) = before {
                        before.wait().await;
                    }
                    work.instrument(span.clone()).await
                }
            };
            spans::record_call(&span, &outcome, content);
            (index, outcome)
        });
        ids.push(handle.id());
    }

    let mut outcomes: Vec<Option<Outcome>> = vec![None; calls.len()];
    let mut end = CallsEnd::Done;
    let mut aborted = false;
    loop {
        let joined = tokio::select! {
            biased;
            () = ctx.cancelled(), if !aborted => {
                // P4: the call contexts are children of `ctx`, so every call has seen the
                // cancellation; drop what is still in flight, and collect what ended.
                aborted = true;
                set.abort_all();
                if end == CallsEnd::Done {
                    end = CallsEnd::Cancelled;
                }
                continue;
            }
            joined = set.join_next_with_id() => joined,
        };
        let Some(joined) = joined else { break };
        let (index, outcome) = match joined {
            Ok((_, (index, outcome))) => (Some(index), outcome),
            Err(e) => (ids.iter().position(|id| *id == e.id()), lost_task(&e)),
        };
        let Some(index) = index else { continue };
        if outcome.is_fatal() && end == CallsEnd::Done {
            // P2: the first fatal outcome cancels the siblings, which are still joined.
            end = CallsEnd::Fatal(position(index));
            turn_ctx.cancellation().cancel();
        }
        if sink.is_active() {
            let record = record(turn, position(index), &calls[index], outcome.clone());
            sink.emit(|| RunEvent::CallFinished(record));
        }
        outcomes[index] = Some(outcome);
    }

    let records = calls
        .iter()
        .zip(outcomes)
        .enumerate()
        .map(|(index, (call, outcome))| {
            let outcome = outcome.unwrap_or_else(|| {
                Outcome::cancelled(Error::new(
                    ErrorKind::Cancelled,
                    "the call was dropped before it ended",
                ))
            });
            record(turn, position(index), call, outcome)
        })
        .collect();
    (records, end)
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
    /// The steps of `calls`, or `None` when none of them is a call of a sequential tool
    /// (the usual case: every call runs at once, as before).
    fn of(shared: &Shared, calls: &[ToolCall], advertised: &[bool]) -> Option<Steps> {
        let sequential: Vec<bool> = calls
            .iter()
            .map(|call| {
                shared
                    .by_name
                    .get(&call.name)
                    .filter(|&&i| advertised.get(i).copied().unwrap_or(false))
                    .is_some_and(|&i| shared.tools[i].is_sequential())
            })
            .collect();
        if !sequential.contains(&true) {
            return None;
        }
        let mut step_of = Vec::with_capacity(calls.len());
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
    }
}

/// The outcome of a call whose task did not return: aborted (the run was cancelled), or
/// panicked outside the handler (a bug: `invoke` contains the handler's panics).
fn lost_task(e: &task::JoinError) -> Outcome {
    if e.is_cancelled() {
        Outcome::cancelled(Error::new(
            ErrorKind::Cancelled,
            "the run was cancelled; the call was dropped",
        ))
    } else {
        Outcome::failure(Error::new(
            ErrorKind::Panic,
            format!("the task running the call panicked: {e}"),
        ))
    }
}

/// One call: a slot, then the pipeline, under the tool's timeout.
async fn run_one(
    ctx: Context,
    target: Option<(Tool, Option<Duration>)>,
    arguments: String,
    limits: Limits,
    slots: Arc<Semaphore>,
    approved: bool,
    hooks: Hooks,
) -> Outcome {
    let permit = tokio::select! {
        biased;
        () = ctx.cancelled() => return not_started(),
        permit = slots.acquire_owned() => permit,
    };
    let Ok(_permit) = permit else {
        return not_started();
    };
    if ctx.is_cancelled() {
        return not_started();
    }
    // A5: a name the agent does not hold gets the same answer as a tool this run did not
    // advertise. An advertised tool goes through `invoke_with`, whose availability re-check
    // decides (A4: a capability revoked mid-run blocks the call).
    let Some((tool, timeout)) = target else {
        tracing::debug!("the model called a tool this run did not advertise");
        return Outcome::unavailable();
    };
    let call = async {
        // K1: the hooks wrap the handler (without hooks, a branch).
        if approved {
            hooks
                .invoke_approved(&tool, &ctx, arguments.as_bytes(), &limits)
                .await
        } else {
            hooks
                .invoke(&tool, &ctx, arguments.as_bytes(), &limits)
                .await
        }
    };
    let outcome = match timeout {
        None => call.await,
        Some(limit) => match tokio::time::timeout(limit, call).await {
            Ok(outcome) => outcome,
            Err(_) => {
                // The handler's future is dropped; cancel the call's token too, for anything
                // it started that watches it.
                ctx.cancellation().cancel();
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
        },
    };
    tracing::debug!(outcome = %outcome.kind(), "tool call ended");
    outcome
}

fn not_started() -> Outcome {
    Outcome::cancelled(Error::new(
        ErrorKind::Cancelled,
        "the call was cancelled before it started",
    ))
}
