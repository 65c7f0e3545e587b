//! The calls of a turn in a durable run whose journal takes them concurrently (W9): each call
//! a step of its own, which the journal starts in the model's order, at most
//! `max_concurrency` in flight, and runs apart from the run with [`CallStep::run`]. The run
//! reads each call's outcome from its recorded form (W4), whichever process ran it.
//!
//! A sequential call (L4) is a batch of its own, with nothing else in flight; the calls
//! between two sequential ones are one batch. A fatal outcome (P2) stops the calls not yet
//! started, which are answered as cancelled; the calls already in flight end as they do.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tokio::sync::Semaphore;
use tool_core::{Context, Error, ErrorKind, Outcome};
use tracing::Instrument;

use super::{One, record};
use crate::agent::batch::{Batch, CallsEnd};
use crate::agent::env::Env;
use crate::agent::event::{RunEvent, Sink};
use crate::agent::handle::Agent;
use crate::agent::journal::{
    CallBatch, CallStep, Journal, JournalError, Retry, StepKind, outcome_value,
};
use crate::agent::output::CallRecord;
use crate::agent::pause::BoxFuture;
use crate::agent::shared::Shared;
use crate::agent::spans;
use crate::model::ToolCall;

/// Runs the calls of `batch` through `journal`'s concurrent calls (W9), returning their
/// records in call order and how the turn ended.
pub(crate) async fn run_calls(
    journal: &dyn Journal,
    env: Env<'_>,
    batch: Batch<'_>,
    targets: &[Option<usize>],
    turn: usize,
) -> (Vec<CallRecord>, CallsEnd) {
    let Env {
        shared, ctx, sink, ..
    } = env;
    let steps = call_steps(batch, targets, turn);
    let mut results: Vec<Option<Result<Value, JournalError>>> = vec![None; steps.len()];
    // The position of the first call that ended fatally, in the order the calls ended.
    let fatal: OnceLock<usize> = OnceLock::new();
    let mut end = CallsEnd::Done;
    for range in segments(shared, targets) {
        if ctx.is_cancelled() {
            end = CallsEnd::Cancelled;
            break;
        }
        let start = range.start;
        let ended = |index: usize, value: &Value| {
            let outcome = serde_json::from_value::<Outcome>(value.clone());
            if outcome.is_ok_and(|outcome| outcome.is_fatal()) {
                let _ = fatal.set(steps[start + index].position);
                return false;
            }
            !ctx.is_cancelled()
        };
        // A sequential call runs with nothing else in flight (L4).
        let limit = if sequential(shared, targets[start]) {
            1
        } else {
            shared.max_concurrency
        };
        let calls = CallBatch {
            calls: steps[range.clone()].to_vec(),
            limit,
            ended: &ended,
        };
        match journal.calls(calls).await {
            Ok(found) => {
                for (slot, result) in results[range].iter_mut().zip(found) {
                    *slot = result;
                }
            }
            // The engine cancelled the run: the calls not answered end so.
            Err(e) if e.is_cancelled() => {
                end = CallsEnd::Cancelled;
                break;
            }
            Err(e) => {
                for slot in &mut results[range] {
                    *slot = Some(Err(e.clone()));
                }
            }
        }
        if fatal.get().is_some() || results.iter().flatten().any(Result::is_err) {
            break;
        }
    }
    records(
        Ended {
            sink,
            turn,
            batch,
            end,
            fatal: fatal.into_inner(),
        },
        results,
    )
}

/// How a batch of concurrent calls ended, for its records.
struct Ended<'a> {
    sink: &'a Sink,
    turn: usize,
    batch: Batch<'a>,
    end: CallsEnd,
    /// The position of the first call that ended fatally, if one did.
    fatal: Option<usize>,
}

/// The records of the batch's calls in call order, from what the journal answered, and how the
/// turn ended; the run's stream hears of each call.
fn records(
    ended: Ended<'_>,
    results: Vec<Option<Result<Value, JournalError>>>,
) -> (Vec<CallRecord>, CallsEnd) {
    let Ended {
        sink,
        turn,
        batch,
        mut end,
        fatal: mut first_fatal,
    } = ended;
    let mut records = Vec::with_capacity(results.len());
    for (index, (call, result)) in batch.calls.iter().zip(results).enumerate() {
        let outcome = outcome(result, end);
        if outcome.is_fatal() && end == CallsEnd::Done && first_fatal.is_none() {
            first_fatal = Some(batch.position(index));
        }
        let record = record(turn, batch.position(index), call, outcome);
        if sink.is_active() {
            let record = record.clone();
            sink.emit(|| RunEvent::CallFinished(record));
        }
        records.push(record);
    }
    if end == CallsEnd::Done
        && let Some(position) = first_fatal
    {
        end = CallsEnd::Fatal(position);
    }
    (records, end)
}

/// The calls of `batch` as plain data, for the journal.
fn call_steps(batch: Batch<'_>, targets: &[Option<usize>], turn: usize) -> Vec<CallStep> {
    batch
        .calls
        .iter()
        .zip(targets)
        .enumerate()
        .map(|(index, (call, target))| CallStep {
            id: call.id.to_string(),
            tool: call.name.to_string(),
            arguments: call.arguments.clone(),
            turn,
            position: batch.position(index),
            approved: batch.approves(index),
            callable: target.is_some(),
        })
        .collect()
}

/// A call's outcome from what the journal answered: its recorded outcome, the journal's
/// failure (which ends the run), or, for a call not started, cancelled.
fn outcome(result: Option<Result<Value, JournalError>>, end: CallsEnd) -> Outcome {
    let failed = |e: JournalError| {
        let error = Error::with_source(
            ErrorKind::Journal,
            "the run's journal could not give the call's result",
            e,
        );
        Outcome::failure(error.into_permanent())
    };
    match result {
        Some(Ok(value)) => serde_json::from_value::<Outcome>(value).unwrap_or_else(|e| {
            failed(JournalError::new(
                "call",
                format!("the recorded outcome does not read back: {e}"),
            ))
        }),
        Some(Err(e)) => failed(e),
        None => {
            let why = if end == CallsEnd::Cancelled {
                "the run was cancelled; the call did not run"
            } else {
                "the call did not run: a call before it ended the run"
            };
            Outcome::cancelled(Error::new(ErrorKind::Cancelled, why))
        }
    }
}

/// The batches of a turn's calls (L4): a sequential call alone, the calls between two
/// sequential ones together.
fn segments(shared: &Shared, targets: &[Option<usize>]) -> Vec<Range<usize>> {
    let mut segments: Vec<Range<usize>> = Vec::new();
    let mut open = false;
    for (index, &target) in targets.iter().enumerate() {
        let alone = sequential(shared, target);
        match segments.last_mut() {
            Some(last) if open && !alone => last.end = index + 1,
            _ => segments.push(index..index + 1),
        }
        open = !alone;
    }
    segments
}

/// Whether the call of this tool (its index, when callable) is sequential (L4).
fn sequential(shared: &Shared, target: Option<usize>) -> bool {
    target.is_some_and(|i| shared.set.tools[i].is_sequential())
}

impl CallStep {
    /// Runs this call of `agent`'s durable run `run_id`, on a child of `ctx` (the run's
    /// context, as the worker makes it): the pipeline a call of the run goes through
    /// (availability re-check, validation, the approval predicate, hooks, handler, under the
    /// tool's timeout), its idempotency key the one the run gives it (W2). Answers the
    /// outcome in its recorded form (W4), or a failure to retry when it does not serialize.
    pub fn run<'a>(
        &'a self,
        agent: &'a Agent,
        ctx: &'a Context,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Value, Retry>> {
        Box::pin(async move {
            let shared: &Shared = &agent.shared;
            let run_ctx = ctx.child().for_run(run_id);
            let run_ctx = match &shared.elicitor {
                Some(elicitor) if !run_ctx.can_elicit() => {
                    run_ctx.with_elicitor(Arc::clone(elicitor))
                }
                _ => run_ctx,
            };
            let run_ctx = crate::agent::sampling::with_answerers(run_ctx, &agent.shared);
            let call = ToolCall::new(
                self.id.as_str(),
                self.tool.as_str(),
                self.arguments.as_str(),
            );
            let call_ctx = run_ctx
                .for_call(call.id.clone(), call.name.clone())
                .at_position(self.turn, self.position);
            let target = shared
                .set
                .by_name
                .get(self.tool.as_str())
                .copied()
                .filter(|_| self.callable);
            let tool = target.map(|i| (&shared.set.tools[i], shared.timeouts[i]));
            let slots = Semaphore::new(1);
            let one = One::new(shared, call_ctx, &call, tool, &slots, self.approved);
            let content = shared.set.record_tool_content;
            let span = spans::call(&call, tool.map(|(tool, _)| tool.description()), content);
            let outcome = one.run().instrument(span.clone()).await;
            spans::record_call(&span, &outcome, content);
            let kind = StepKind::Call {
                id: self.id.clone(),
                tool: self.tool.clone(),
            };
            outcome_value(&outcome, &kind)
        })
    }
}
