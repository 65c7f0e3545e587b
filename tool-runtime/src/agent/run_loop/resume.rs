//! Resuming a paused run (H3–H5): the paused run is checked against the agent (its seal, its
//! tools) and the decisions against its pending calls, all before anything runs; then the
//! paused turn is finished (approved calls run through the pipeline again, denied ones and
//! deferred results answered as decided) and the run goes on.

use tokio::sync::Semaphore;
use tool_core::{Error, ErrorKind, Outcome, OutcomeKind};

use super::{Run, cancelled};
use crate::agent::calls::{Batch, CallsEnd, record, run_calls};
use crate::agent::error::RunError;
use crate::agent::event::RunEvent;
use crate::agent::output::{CallRecord, RunOutput};
use crate::agent::pause::{
    Answered, Decision, Decisions, PausedRun, PendingCall, PendingKind, ResumeError,
};
use crate::model::{Message, ToolCall, ToolResult};

/// The paused turn of a run being resumed: the results of its calls that ran before the
/// pause, and each pending call with its decision.
pub(crate) struct PausedTurn {
    turn: usize,
    calls: Vec<ToolCall>,
    results: Vec<Answered>,
    decided: Vec<(PendingCall, Decision)>,
}

impl Run<'_> {
    /// Resumes `paused` with `decisions`: every check first (H3, H4: nothing runs when one
    /// fails), then the paused turn, then the turns after it.
    pub(super) async fn resume(
        &mut self,
        paused: PausedRun,
        decisions: Decisions,
    ) -> Result<RunOutput, RunError> {
        let visible = match paused.verify(
            &self.shared.tools,
            &self.shared.by_name,
            self.shared.state_key.as_deref(),
        ) {
            Ok(visible) => visible,
            Err(e) => return Err(refused(e)),
        };
        let decided = match match_decisions(paused.pending(), decisions) {
            Ok(decided) => decided,
            Err(e) => return Err(refused(e)),
        };
        let content = paused.into_parts();
        // `verify` checked that the transcript ends with the paused turn's calls.
        let calls = content
            .transcript
            .last()
            .map(|m| m.tool_calls().to_vec())
            .unwrap_or_default();
        self.transcript = content.transcript;
        self.usage = content.usage;
        let turn = content.turn;
        let paused = PausedTurn {
            turn,
            calls,
            results: content.results,
            decided,
        };
        self.turns(turn + 1, visible, Some(paused)).await
    }

    /// Finishes the paused turn: each decided call gets its outcome (an approved one runs
    /// through [`tool_core::Tool::invoke_approved`]: availability re-checked and arguments
    /// validated again, H4), and every result goes into the transcript in the model's order
    /// (R2).
    pub(super) async fn finish_paused_turn(
        &mut self,
        paused: PausedTurn,
        visible: &[bool],
        slots: &Semaphore,
    ) -> Result<(), RunError> {
        let PausedTurn {
            turn,
            calls,
            results,
            decided,
        } = paused;
        let mut outcomes: Vec<Option<Outcome>> = vec![None; calls.len()];
        let mut approved = Vec::new();
        let mut positions = Vec::new();
        let mut end = CallsEnd::Done;
        for (pending, decision) in decided {
            let index = pending.index();
            let outcome = match decision {
                Decision::Approve => {
                    if let Some(call) = calls.get(index) {
                        approved.push(call.clone());
                        positions.push(index);
                    }
                    continue;
                }
                Decision::Deny { message } => Outcome::denied(message),
                Decision::Complete(Ok(text)) => Outcome::success(text),
                Decision::Complete(Err(cause)) => Outcome::failure(Error::with_source(
                    ErrorKind::Handler,
                    format!("deferred tool `{}` failed", pending.tool()),
                    cause,
                )),
            };
            if outcome.is_fatal() && end == CallsEnd::Done {
                end = CallsEnd::Fatal(index);
            }
            if let Some(call) = calls.get(index) {
                let record = record(turn, index, call, outcome.clone());
                self.sink.emit(|| RunEvent::CallFinished(record));
            }
            if let Some(slot) = outcomes.get_mut(index) {
                *slot = Some(outcome);
            }
        }
        if end == CallsEnd::Done && !approved.is_empty() {
            let (records, ran) = run_calls(
                self.shared,
                self.ctx,
                Batch::approved(&approved, &positions),
                visible,
                turn,
                slots,
                self.sink,
            )
            .await;
            end = ran;
            for record in records {
                if let Some(slot) = outcomes.get_mut(record.index) {
                    *slot = Some(record.outcome);
                }
            }
        }
        let mut answered: Vec<Option<ToolResult>> = vec![None; calls.len()];
        for Answered { index, result } in results {
            if let Some(slot) = answered.get_mut(index) {
                *slot = Some(result);
            }
        }
        let mut fatal = None;
        for (index, (call, (result, outcome))) in calls
            .iter()
            .zip(answered.into_iter().zip(outcomes))
            .enumerate()
        {
            if let Some(result) = result {
                self.transcript.push(Message::Tool(result));
                continue;
            }
            // An approved call that did not run (a sibling ended the run first).
            let outcome = outcome.unwrap_or_else(|| {
                Outcome::cancelled(Error::new(
                    ErrorKind::Cancelled,
                    "the call was not run: the run ended first",
                ))
            });
            let record = record(turn, index, call, outcome);
            self.transcript.push(Message::Tool(
                ToolResult::new(
                    record.id.clone(),
                    record.name.clone(),
                    record.text(),
                    record.kind() != OutcomeKind::Success,
                )
                .with_images(record.outcome.images().to_vec()),
            ));
            if end == CallsEnd::Fatal(index) {
                fatal = Some(self.calls.len());
            }
            self.calls.push(record);
        }
        match end {
            CallsEnd::Done => Ok(()),
            CallsEnd::Cancelled => Err(self.fail(cancelled())),
            CallsEnd::Fatal(_) => {
                let error = match fatal.and_then(|at| self.calls.get(at)) {
                    Some(CallRecord {
                        name, id, outcome, ..
                    }) => match outcome.error() {
                        Some(error) => RunError::from_call(error.clone(), name, id),
                        None => RunError::new(ErrorKind::Permanent, "a call failed fatally")
                            .with_tool(name),
                    },
                    None => RunError::new(ErrorKind::Permanent, "a call failed fatally"),
                };
                Err(self.fail(error))
            }
        }
    }
}

/// One decision per pending call, in the model's order (H4): a call without one, a decision
/// for a call that is not pending, or a decision that does not fit its call is an error.
fn match_decisions(
    pending: &[PendingCall],
    mut decisions: Decisions,
) -> Result<Vec<(PendingCall, Decision)>, ResumeError> {
    let mut decided = Vec::with_capacity(pending.len());
    for call in pending {
        let Some(decision) = decisions.take(call.id()) else {
            return Err(ResumeError::Undecided {
                call_id: call.id().to_owned(),
            });
        };
        let misfit = matches!(
            (call.kind(), &decision),
            (PendingKind::Approval, Decision::Complete(_))
                | (PendingKind::Deferred, Decision::Approve)
        );
        if misfit {
            return Err(ResumeError::WrongDecision {
                call_id: call.id().to_owned(),
                kind: call.kind(),
            });
        }
        decided.push((call.clone(), decision));
    }
    if let Some(id) = decisions.first_id() {
        return Err(ResumeError::UnknownCall {
            call_id: id.to_owned(),
        });
    }
    Ok(decided)
}

/// The run's error for a paused run that cannot be resumed.
fn refused(error: ResumeError) -> RunError {
    RunError::with_source(
        ErrorKind::Resume,
        format!("the paused run cannot be resumed: {error}"),
        error,
    )
}
