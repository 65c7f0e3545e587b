//! Resuming a paused run (H3–H5, H7, H9): the paused run is checked against the agent (its
//! seal, its tools, its typed answer) and the decisions against its pending calls, its pause
//! consumed in the ledger, all before anything runs; then the paused turn is finished
//! (approved calls run through the pipeline again, denied ones and deferred results answered
//! as decided), run control reads the whole turn, and the run goes on from its own state.

use tool_core::{Error, ErrorKind, Outcome};

use super::control::{control, fatal, result_of};
use super::decide::{self, Choice, Matched, match_decisions};
use super::offer::Offer;
use super::{Answering, CallEnd, Env, Run};
use crate::agent::batch::{Batch, CallsEnd};
use crate::agent::calls::record;
use crate::agent::discovery::cancelled;
use crate::agent::error::RunError;
use crate::agent::event::RunEvent;
use crate::agent::output::RunOutput;
use crate::agent::pause::{
    Answered, Decision, Decisions, PausedRun, PendingCall, ResumeError, ResumeOptions,
};
use crate::agent::spans;
use crate::agent::state::RunState;
use crate::model::{Message, ToolCall};

/// The paused turn of a run being resumed: the results of its calls that ran before the
/// pause, and each pending call with its decision.
pub(crate) struct PausedTurn {
    turn: usize,
    calls: Vec<ToolCall>,
    results: Vec<Answered>,
    decided: Vec<(PendingCall, Choice)>,
    /// The calls left pending (B3): the run pauses again with them.
    left: Vec<PendingCall>,
}

/// What the decisions of a paused turn give before its approved calls run.
struct Decided {
    /// Each call's outcome, by position, once known.
    outcomes: Vec<Option<Outcome>>,
    /// The approved calls, to run.
    approved: Vec<ToolCall>,
    /// Their positions in the turn.
    positions: Vec<usize>,
    /// Whether a decided call ended the turn (a deferred call's permanent failure).
    end: CallsEnd,
}

/// Resumes `paused` with `decisions`: every check first (H3, H4, H7: nothing runs when one
/// fails), the pause consumed in the ledger (H9), then the paused turn and the turns after it.
pub(super) async fn resume(
    env: Env<'_>,
    paused: PausedRun,
    decisions: Decisions,
    options: ResumeOptions,
    answering: Option<Answering>,
    span: &tracing::Span,
) -> Result<RunOutput, RunError> {
    let shared = env.shared;
    let visible = paused
        .verify(
            &shared.set.tools,
            &shared.set.by_name,
            shared.set.state_key.as_deref(),
        )
        .map_err(refused)?;
    // O2: the run's typed answer is named again, with the same schema.
    let wanted = paused.answer_state();
    let fits = match (wanted, &answering) {
        (None, None) => true,
        (Some(state), Some(answering)) => answering.fits(state),
        _ => false,
    };
    if !fits {
        return Err(refused(ResumeError::AnswerMismatch {
            wanted: wanted.is_some(),
        }));
    }
    // H4, B2, B3: the decisions fit their calls at every level, edited arguments fit their
    // tools' schemas, and the sub-agents' paused runs their agents, before anything runs.
    decide::check(shared, &paused, &decisions).map_err(refused)?;
    let matched = match_decisions(paused.pending(), decisions).map_err(refused)?;
    // H9: the pause is consumed before anything runs; a replay is refused.
    if let Some(ledger) = options.ledger.as_ref().or(shared.ledger.as_ref()) {
        let (run_id, pause_id) = (paused.run_id(), paused.pause_id());
        match ledger.consume(run_id, pause_id).await {
            Ok(true) => {}
            Ok(false) => {
                return Err(refused(ResumeError::Replayed {
                    run_id: run_id.to_owned(),
                    pause_id: pause_id.to_owned(),
                }));
            }
            Err(e) => {
                return Err(refused(ResumeError::Ledger {
                    pause_id: pause_id.to_owned(),
                    reason: e.to_string(),
                }));
            }
        }
    }
    let content = paused.into_parts();
    let mut state = content.state;
    // H7: a resume may tighten the run's limits, never loosen them.
    if let Some(limits) = &options.limits {
        state.options.tighten(limits);
    }
    spans::record_run_id(span, &state.run_id);
    spans::record_resumed(span, state.trace.as_deref());
    apply(&mut state, &matched);
    // `verify` checked that the transcript ends with the paused turn's calls.
    let calls = state
        .transcript
        .last()
        .map(|m| m.tool_calls().to_vec())
        .unwrap_or_default();
    let turn = state.usage.len();
    let paused = PausedTurn {
        turn,
        calls,
        results: content.results,
        decided: matched.decided,
        left: matched.left,
    };
    let mut run = Run::new(env, state, answering);
    run.turns(visible, Some(paused)).await
}

impl Run<'_> {
    /// Finishes the paused turn: each decided call gets its outcome (an approved one runs
    /// through [`tool_core::Tool::invoke_approved`]: availability re-checked and arguments
    /// validated again, H4), every result goes into the transcript in the model's order (R2),
    /// and run control reads the whole turn as if it had not paused (L1, L5, H7). Returns the
    /// run's output when a stopping tool succeeded in the turn.
    pub(super) async fn finish_paused_turn(
        &mut self,
        paused: PausedTurn,
        offer: &Offer<'_>,
    ) -> Result<Option<String>, RunError> {
        let PausedTurn {
            turn,
            calls,
            results,
            decided,
            left,
        } = paused;
        let decided = self.decide(turn, &calls, decided);
        let (outcomes, end) = self.run_approved(turn, decided, offer).await;
        // B2, B3: calls left pending, or a sub-agent run that paused again: the run pauses
        // again once the decided calls ended.
        let again = !left.is_empty() || outcomes.iter().flatten().any(Outcome::is_pending);
        if end == CallsEnd::Done && again {
            let ended = outcomes.into_iter().enumerate().zip(&calls);
            let records = ended
                .filter_map(|((index, outcome), call)| Some(record(turn, index, call, outcome?)))
                .collect();
            return Err(self.pause_again(&offer.visible, results, records, left));
        }
        let answered = by_position(results, calls.len());
        // Each call's place: a result kept by the pause, or this process's record.
        let first = self.calls.len();
        let mut fatal_at = None;
        for (index, (call, (kept, outcome))) in
            calls.iter().zip(answered.iter().zip(outcomes)).enumerate()
        {
            if let Some(kept) = kept {
                self.state
                    .transcript
                    .push(Message::Tool(kept.result.clone()));
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
            self.state
                .transcript
                .push(Message::Tool(result_of(&record)));
            if end == CallsEnd::Fatal(index) {
                fatal_at = Some(self.calls.len());
            }
            self.calls.push(record);
        }
        self.end_of_calls(end, fatal_at)?;
        // H7: run control over the whole turn, in the model's order, as a run that did not
        // pause reads it.
        let mut records = self.calls[first..].iter();
        let ends: Vec<CallEnd<'_>> = answered
            .iter()
            .filter_map(|kept| match kept {
                Some(kept) => Some(CallEnd {
                    name: &kept.result.name,
                    id: &kept.result.call_id,
                    counts: kept.counts,
                    violations: &kept.violations,
                    text: &kept.result.text,
                }),
                None => records.next().map(CallEnd::of),
            })
            .collect();
        let control = control(&mut self.state, self.env.shared, ends.into_iter());
        self.follow(control)
    }

    /// Runs the approved calls of the paused turn, unless a decided call ended it: each
    /// call's outcome by position, once known, and how the turn's calls ended.
    async fn run_approved(
        &mut self,
        turn: usize,
        decided: Decided,
        offer: &Offer<'_>,
    ) -> (Vec<Option<Outcome>>, CallsEnd) {
        let Decided {
            mut outcomes,
            approved,
            positions,
            mut end,
        } = decided;
        if end == CallsEnd::Done && !approved.is_empty() {
            let batch = Batch::approved(&approved, &positions);
            let (records, ran) = self.run_calls(batch, offer, turn, &[]).await;
            end = ran;
            for record in records {
                if let Some(slot) = outcomes.get_mut(record.index) {
                    *slot = Some(record.outcome);
                }
            }
        }
        (outcomes, end)
    }

    /// How the paused turn's calls ended (P1–P4): on, or the run's failure (the fatal call's,
    /// its record at `fatal_at`).
    fn end_of_calls(&mut self, end: CallsEnd, fatal_at: Option<usize>) -> Result<(), RunError> {
        match end {
            CallsEnd::Done => Ok(()),
            CallsEnd::Cancelled => Err(self.fail(cancelled())),
            CallsEnd::Fatal(_) => {
                let error = match fatal_at.and_then(|at| self.calls.get(at)) {
                    Some(record) => fatal(record),
                    None => RunError::new(ErrorKind::Permanent, "a call failed fatally"),
                };
                Err(self.fail(error))
            }
        }
    }

    /// The outcomes the decisions give (H4, H5): a denial's message, a deferred call's
    /// result; the approved calls are gathered to run, with their positions in the turn.
    fn decide(
        &self,
        turn: usize,
        calls: &[ToolCall],
        decided: Vec<(PendingCall, Choice)>,
    ) -> Decided {
        let mut outcomes: Vec<Option<Outcome>> = vec![None; calls.len()];
        let mut approved = Vec::new();
        let mut positions = Vec::new();
        let mut end = CallsEnd::Done;
        for (pending, choice) in decided {
            let index = pending.index();
            let decision = match choice {
                Choice::Decided(decision) => decision,
                Choice::Nested(run, decisions) => {
                    // B2: the call runs again, and resumes its sub-agent's run.
                    if let Some(nest) = self.env.nest {
                        nest.resume(pending.id(), *run, decisions);
                    }
                    Decision::Approve
                }
            };
            let outcome = match decision {
                // B3: edits are in `calls` already, and an allowed tool in the state.
                Decision::Approve | Decision::ApproveWith { .. } | Decision::AllowForRun => {
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
                self.env.shared.observe(std::slice::from_ref(&record));
                self.env.sink.emit(|| RunEvent::CallFinished(record));
            }
            if let Some(slot) = outcomes.get_mut(index) {
                *slot = Some(outcome);
            }
        }
        Decided {
            outcomes,
            approved,
            positions,
            end,
        }
    }
}

/// The results a pause kept, each at its call's position in a turn of `len` calls.
fn by_position(results: Vec<Answered>, len: usize) -> Vec<Option<Answered>> {
    let mut answered: Vec<Option<Answered>> = vec![None; len];
    for result in results {
        let index = result.index;
        if let Some(slot) = answered.get_mut(index) {
            *slot = Some(result);
        }
    }
    answered
}

/// B3: a call approved with edited arguments runs with them, and the transcript shows them
/// as the call's; an allowed tool's calls run without asking for the rest of the run.
fn apply(state: &mut RunState, matched: &Matched) {
    let edits = decide::edits(matched);
    if let Some(Message::Assistant { tool_calls, .. }) = state.transcript.last_mut() {
        for (index, arguments) in edits {
            if let Some(call) = tool_calls.get_mut(index) {
                call.arguments = arguments;
            }
        }
    }
    state.allowed.extend(decide::allowed(matched));
}

/// The run's error for a paused run that cannot be resumed.
fn refused(error: ResumeError) -> RunError {
    RunError::with_source(
        ErrorKind::Resume,
        format!("the paused run cannot be resumed: {error}"),
        error,
    )
}
