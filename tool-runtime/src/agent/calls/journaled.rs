//! The calls of a turn in a durable run (W1): each call one step of the run's journal, keyed
//! by its call id, in the model's order. The whole pipeline runs inside the step (the
//! availability re-check, validation, the approval predicate, the hooks, the handler), and
//! the step records the call's outcome in its recorded form (W4). A replay answers each
//! recorded call from the journal without running it.
//!
//! A sub-agent's call (B2) is the exception: a step cannot hold steps, so it runs outside one,
//! the sub-agent's run taking its steps in the run's journal under the call
//! (`compose::steps`), and its outcome is then recorded as the call's step. A replay runs it
//! again; its sub-agent's steps answer from the journal, so nothing of it runs twice. Its
//! checks (availability, validation, the approval predicate) and hooks run on every replay:
//! they decide the same way when the application's policies do; when they do not, a journal
//! that checks its steps' names (as [`crate::journal::MemoryJournal`] does) refuses the
//! replay, the steps it holds not being the run's.
//!
//! A journal that takes calls concurrently (W9) takes a turn that calls a sub-agent here, one
//! call at a time.

use tokio::sync::Semaphore;
use tool_core::{Error, ErrorKind, Outcome};
use tracing::Instrument;

use super::{One, record};
use crate::agent::batch::{Batch, CallsEnd};
use crate::agent::compose::steps::{self, ParentSteps};
use crate::agent::env::Env;
use crate::agent::event::RunEvent;
use crate::agent::journal::{Journal, JournalError, Step, StepKind, outcome_value};
use crate::agent::output::CallRecord;
use crate::agent::shared::Shared;
use crate::agent::{progress, spans};
use crate::model::ToolCall;

/// Runs the calls of `batch` one at a time, each a step of `journal`: a call starts when the
/// one before it has ended, so the journal's order is the model's on every replay. A journal
/// that takes calls concurrently ([`Journal::parallel_calls`]) gets them all at once instead
/// (`super::parallel`, W9). A fatal
/// outcome ends the turn: the calls after it do not run (P2), and are answered as cancelled.
pub(crate) async fn run_calls(
    journal: &dyn Journal,
    env: Env<'_>,
    batch: Batch<'_>,
    targets: &[Option<usize>],
    turn: usize,
    slots: &Semaphore,
) -> (Vec<CallRecord>, CallsEnd) {
    // W9: a journal that takes each call as a step of its own runs them concurrently; a
    // turn that calls a sub-agent runs here, one call at a time, so that the sub-agent's
    // steps are the run's (B2).
    let sub_agents = || {
        let shared = env.shared;
        let held = |(call, target): (&ToolCall, &Option<usize>)| {
            target.is_some() && shared.sub_agent(call.name.as_str()).is_some()
        };
        batch.calls.iter().zip(targets).any(held)
    };
    if journal.parallel_calls() && !sub_agents() {
        return super::parallel::run_calls(journal, env, batch, targets, turn).await;
    }
    let Env {
        shared, ctx, sink, ..
    } = env;
    let turn_ctx = ctx.child();
    let mut records = Vec::with_capacity(batch.calls.len());
    let mut end = CallsEnd::Done;
    for (index, (call, &target)) in batch.calls.iter().zip(targets).enumerate() {
        let position = batch.position(index);
        if end == CallsEnd::Done && ctx.is_cancelled() {
            end = CallsEnd::Cancelled;
        }
        let outcome = if end == CallsEnd::Done {
            let call_ctx = turn_ctx
                .for_call(call.id.clone(), call.name.clone())
                .at_position(turn, position);
            let call_ctx = progress::listen(call_ctx, sink, turn, position, call);
            let tool = target.map(|i| (&shared.set.tools[i], shared.timeouts[i]));
            let one = One::new(shared, call_ctx, call, tool, slots, batch.approves(index));
            match take(journal, one, call, shared).await {
                Ok(outcome) => outcome,
                // The engine cancelled the run: this call and the rest of the turn end so.
                Err(e) if e.is_cancelled() => {
                    end = CallsEnd::Cancelled;
                    let error =
                        Error::with_source(ErrorKind::Cancelled, "the run was cancelled", e);
                    Outcome::cancelled(error)
                }
                // A call whose step the journal cannot give ends the run.
                Err(e) => {
                    let error = Error::with_source(
                        ErrorKind::Journal,
                        "the run's journal could not give the call's result",
                        e,
                    );
                    Outcome::failure(error.into_permanent())
                }
            }
        } else {
            let why = if end == CallsEnd::Cancelled {
                "the run was cancelled; the call did not run"
            } else {
                "the call did not run: a call before it ended the run"
            };
            Outcome::cancelled(Error::new(ErrorKind::Cancelled, why))
        };
        if outcome.is_fatal() && end == CallsEnd::Done {
            end = CallsEnd::Fatal(position);
        }
        let record = record(turn, position, call, outcome);
        if sink.is_active() {
            let record = record.clone();
            sink.emit(|| RunEvent::CallFinished(record));
        }
        records.push(record);
    }
    (records, end)
}

/// The call `one` of `call` in `journal`: one step, or, for a sub-agent's call, the sub-agent
/// run's steps and then the call's (B2).
async fn take(
    journal: &dyn Journal,
    mut one: One<'_>,
    call: &ToolCall,
    shared: &Shared,
) -> Result<Outcome, JournalError> {
    let content = shared.set.record_tool_content;
    let sub_agent = one.tool.is_some() && shared.sub_agent(call.name.as_str()).is_some();
    if !sub_agent {
        return step(journal, one, call, content).await;
    }
    let (port, mut asks) = steps::port(journal.run_id(), call);
    one.ctx = one.ctx.clone().with(ParentSteps(Some(port)));
    // Its limits bound a sub-agent's run here, not the tool's timeout: a clock is no step of
    // the journal, so a replay could not decide a timeout again (and would go on past it).
    one.tool = one.tool.map(|(tool, _)| (tool, None));
    let description = one.tool.map(|(tool, _)| tool.description());
    let span = spans::call(call, description, content);
    let outcome = {
        let run = one.run().instrument(span.clone());
        tokio::pin!(run);
        tokio::select! {
            biased;
            outcome = &mut run => outcome,
            // The port closes only with the call's context; the call's end is then near.
            () = asks.serve(journal) => run.await,
        }
    };
    spans::record_call(&span, &outcome, content);
    // A step the journal could not take ends the run as any call's step would.
    if let Some(failed) = asks.failed() {
        return Err(failed);
    }
    let kind = call_kind(call);
    let value = outcome_value(&outcome, &kind);
    let recorded = journal
        .step(Step::new(kind.clone(), Box::pin(std::future::ready(value))))
        .await?;
    read_back(&kind, Some(outcome), recorded)
}

/// The kind of `call`'s own step.
fn call_kind(call: &ToolCall) -> StepKind {
    StepKind::Call {
        id: call.id.to_string(),
        tool: call.name.to_string(),
    }
}

/// A call's outcome: as it ran here when it did (its records and events keep the
/// unredacted error, E3), else as the journal recorded it (W4).
fn read_back(
    kind: &StepKind,
    ran_here: Option<Outcome>,
    recorded: serde_json::Value,
) -> Result<Outcome, JournalError> {
    match ran_here {
        Some(outcome) => Ok(outcome),
        None => serde_json::from_value::<Outcome>(recorded).map_err(|e| {
            JournalError::new(
                kind.to_string(),
                format!("the recorded outcome does not read back: {e}"),
            )
        }),
    }
}

/// The call `one` of `call` as one step of `journal`, keyed by its call id: its outcome as
/// this process made it when the step ran here (its records and events keep the unredacted
/// error, E3), else as the journal recorded it (W4), which holds all that run control reads.
async fn step(
    journal: &dyn Journal,
    one: One<'_>,
    call: &ToolCall,
    content: bool,
) -> Result<Outcome, JournalError> {
    let kind = call_kind(call);
    let step_kind = kind.clone();
    let live = std::sync::Mutex::new(None);
    let run = async {
        let description = one.tool.map(|(tool, _)| tool.description());
        let span = spans::call(call, description, content);
        let outcome = one.run().instrument(span.clone()).await;
        spans::record_call(&span, &outcome, content);
        let value = outcome_value(&outcome, &step_kind);
        *live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(outcome);
        value
    };
    let recorded = journal.step(Step::new(kind.clone(), Box::pin(run))).await?;
    let ran_here = live
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    read_back(&kind, ran_here, recorded)
}
