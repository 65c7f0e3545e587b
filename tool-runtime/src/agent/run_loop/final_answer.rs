//! The end of a turn's reply as the run's answer (R1, O2): a reply without calls (the final
//! answer, a typed answer to check, or a reply cut off), and a call of the final-answer tool.

use super::answer::{ANSWER_NAME, Correction};
use super::offer::Offer;
use super::{NOT_RUN_ANSWERED, Run};
use crate::agent::batch::Batch;
use crate::agent::error::RunError;
use crate::agent::event::RunEvent;
use crate::agent::pause::Answered;
use crate::agent::state::Counts;
use crate::model::{FinishReason, Message, ToolCall, ToolResult};
use tool_core::ErrorKind;

impl Run<'_> {
    /// A reply without calls (R1): the final answer, a typed answer to check (O2), or a reply
    /// cut off at the output token limit.
    pub(super) fn text_reply(
        &mut self,
        text: String,
        finish: Option<&FinishReason>,
        turn_end: impl FnOnce() -> RunEvent,
    ) -> Result<Option<String>, RunError> {
        self.state.transcript.push(Message::assistant(text.clone()));
        self.env.sink.emit(turn_end);
        if finish == Some(&FinishReason::Length) {
            // A reply cut at the output token limit is not an answer: the run ends with kind
            // `Truncated`, keeping the partial text (in the error and the transcript) and the
            // usage.
            let error = RunError::new(
                ErrorKind::Truncated,
                "the model's final reply was cut off at its output token limit",
            )
            .with_partial_text(text);
            return Err(self.fail(error));
        }
        // O2: the text is the typed answer (native), or should have been a call.
        let (Some(answering), Some(state)) = (&self.answering, &mut self.state.answer) else {
            return Ok(Some(text));
        };
        let judged = if answering.native() {
            answering.judge(&text, None, state)
        } else {
            Err(answering.text_instead_of_call(state))
        };
        match judged {
            Ok(()) => Ok(Some(text)),
            Err(Correction::Retry(message)) => {
                self.state.transcript.push(Message::user(message));
                Ok(None)
            }
            Err(Correction::GiveUp(error)) => Err(self.fail(*error)),
        }
    }

    /// A turn whose call at `at` is the final-answer tool's (O2): an answer that fits ends the
    /// run (the turn's other calls do not run); one that does not goes back to the model with
    /// its violations, in the model's order among the results of the other calls, which run.
    pub(super) async fn final_call(
        &mut self,
        turn: usize,
        calls: &[ToolCall],
        at: usize,
        offer: &Offer<'_>,
        turn_end: impl FnOnce() -> RunEvent,
    ) -> Result<Option<String>, RunError> {
        let (Some(answering), Some(state)) = (&self.answering, &mut self.state.answer) else {
            return Ok(None);
        };
        let answer = &calls[at];
        let message = match answering.judge(&answer.arguments, Some(&answer.id), state) {
            Ok(()) => {
                self.close_answered_turn(calls, Some(at));
                self.env.sink.emit(turn_end);
                return Ok(Some(answer.arguments.clone()));
            }
            Err(Correction::GiveUp(error)) => {
                self.close_answered_turn(calls, None);
                self.env.sink.emit(turn_end);
                return Err(self.fail(*error));
            }
            Err(Correction::Retry(message)) => message,
        };
        // L2: the other calls would cross the limit on calls: none runs, each is answered, and
        // the run ends, as in any turn.
        let more = calls.len() as u64 - 1;
        if let Some(limit) = self
            .state
            .options
            .usage_limits()
            .before_calls(self.state.calls_made + self.state.nested.calls, more)
        {
            self.env.sink.emit(turn_end);
            return Err(self.refuse_calls(turn, &limit, calls, Some((at, &message))));
        }
        let others: Vec<ToolCall> = calls
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != at)
            .map(|(_, call)| call.clone())
            .collect();
        let (mut records, end) = self.run_calls(Batch::turn(&others), offer, turn, &[]).await;
        // The records name their positions in the model's turn, past the answer's call.
        for record in &mut records {
            if record.index >= at {
                record.index += 1;
            }
        }
        let rejected = ToolResult::new(answer.id.clone(), ANSWER_NAME, message, true);
        // H2: calls of the same turn that wait pause the run, the answer's violations kept
        // as that call's result.
        if self.pauses_after(&records, end) {
            self.env.sink.emit(turn_end);
            let answered = Answered {
                index: at,
                result: rejected,
                counts: Counts::Neither,
                violations: Vec::new(),
            };
            return Err(self.pause(&offer.available, records, Some(answered)));
        }
        // The answer's violations go at their place among the results (R2), before run
        // control may end the run with the transcript.
        let answered = self.answer_with(records, end, Some((at, rejected)));
        self.env.sink.emit(turn_end);
        answered
    }

    /// Answers every call of a turn that ended the run with its final answer (O2): the
    /// answer's call, at `accepted`, that it was received; the others that they did not run
    /// (all of them when the answer was given up on).
    fn close_answered_turn(&mut self, calls: &[ToolCall], accepted: Option<usize>) {
        for (i, call) in calls.iter().enumerate() {
            let (text, failed) = if accepted == Some(i) {
                ("the final answer was received", false)
            } else {
                (NOT_RUN_ANSWERED, true)
            };
            self.state.transcript.push(Message::Tool(ToolResult::new(
                call.id.clone(),
                call.name.clone(),
                text,
                failed,
            )));
        }
    }
}
