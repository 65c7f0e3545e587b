//! Run control after a turn's calls (L1, L2, L5): the calls' results put in the transcript,
//! a stopping tool's success as the run's output, each tool's failures in a row against its
//! retry budget, and the limit on calls.

use tool_core::{ErrorKind, OutcomeKind};

use super::answer::ANSWER_NAME;
use super::{NOT_RUN, Run, cancelled};
use crate::agent::batch::CallsEnd;
use crate::agent::error::RunError;
use crate::agent::output::CallRecord;
use crate::agent::shared::Shared;
use crate::agent::state::{CallEnd, Counts, RunState};
use crate::model::{Message, ToolCall, ToolResult};

/// What run control says after a turn's calls (L1, L5).
pub(super) enum Control {
    /// The run goes on.
    Go,
    /// A stopping tool succeeded: its result is the run's output (L5).
    Stop { tool: String, text: String },
    /// A tool failed more calls in a row than its budget (L1).
    OverBudget(RunError),
}

impl Run<'_> {
    /// Puts a turn's call records in the transcript (in the model's order, R2) and the
    /// run's record; ends the run if the turn did.
    pub(super) fn answer(
        &mut self,
        records: Vec<CallRecord>,
        end: CallsEnd,
    ) -> Result<Option<String>, RunError> {
        self.answer_with(records, end, None)
    }

    /// [`Run::answer`], with `extra`: a result the turn gave besides its calls' (the final
    /// answer's violations, O2) and its position in the turn, put in the transcript at its
    /// place before the run may end.
    pub(super) fn answer_with(
        &mut self,
        records: Vec<CallRecord>,
        end: CallsEnd,
        extra: Option<(usize, ToolResult)>,
    ) -> Result<Option<String>, RunError> {
        let first = self.calls.len();
        let before = self.state.transcript.len();
        self.state.calls_made += records.len() as u64;
        let results = records
            .iter()
            .map(|record| Message::Tool(result_of(record)));
        self.state.transcript.extend(results);
        self.calls.extend(records);
        if let Some((at, result)) = extra {
            let place = (before + at).min(self.state.transcript.len());
            self.state.transcript.insert(place, Message::Tool(result));
        }
        match end {
            CallsEnd::Done => {}
            CallsEnd::Cancelled => return Err(self.fail(cancelled())),
            CallsEnd::Fatal(index) => {
                let error = fatal(&self.calls[first + index]);
                return Err(self.fail(error));
            }
        }
        let ends = self.calls[first..].iter().map(CallEnd::of);
        let control = control(&mut self.state, self.env.shared, ends);
        self.follow(control)
    }

    /// Follows run control's word: the run's output when a stopping tool succeeded (L5), the
    /// failure when a tool went past its budget (L1).
    pub(super) fn follow(&mut self, control: Control) -> Result<Option<String>, RunError> {
        match control {
            Control::Go => Ok(None),
            Control::Stop { tool, text } => {
                self.stopped_at = Some(tool);
                Ok(Some(text))
            }
            Control::OverBudget(error) => Err(self.fail(error)),
        }
    }

    /// Ends the run at the limit on calls (L2): no call of turn `turn` ran, each is answered
    /// that it did not (the final answer's call, at its place, with its violations, O2), so
    /// that the transcript stays whole.
    pub(super) fn refuse_calls(
        &mut self,
        turn: usize,
        limit: &str,
        calls: &[ToolCall],
        answer: Option<(usize, &str)>,
    ) -> RunError {
        for (i, call) in calls.iter().enumerate() {
            let (name, text) = match answer {
                Some((at, message)) if at == i => (ANSWER_NAME, message),
                _ => (&*call.name, NOT_RUN),
            };
            self.state.transcript.push(Message::Tool(ToolResult::new(
                call.id.clone(),
                name,
                text,
                true,
            )));
        }
        let error = RunError::new(
            ErrorKind::UsageLimit,
            format!("the run reached {limit}; the calls of turn {turn} did not run"),
        );
        self.fail(error)
    }
}

/// The result the model reads of a call (its model-facing text, E1, E2).
pub(super) fn result_of(record: &CallRecord) -> ToolResult {
    ToolResult::new(
        record.id.clone(),
        record.name.clone(),
        record.text(),
        record.kind() != OutcomeKind::Success,
    )
    .with_images(record.outcome.images().to_vec())
    .with_resources(record.outcome.resources().to_vec())
}

/// The failure of a call that ends the run (P1, A6, E4).
pub(super) fn fatal(record: &CallRecord) -> RunError {
    match record.error() {
        Some(error) => RunError::from_call(error.clone(), &record.name, &record.id),
        None => {
            RunError::new(ErrorKind::Permanent, "a call failed fatally").with_tool(&record.name)
        }
    }
}

/// Run control over a turn's calls, in the model's order (L5, then L1): the first success of
/// a tool the run stops at is its output; otherwise each tool's failures in a row are counted
/// in `state` (invalid arguments or a handler's [`tool_core::ToolError::retry`] count, a
/// success starts over), and a tool past its retry budget ends the run.
pub(super) fn control<'e>(
    state: &mut RunState,
    shared: &Shared,
    ends: impl Iterator<Item = CallEnd<'e>> + Clone,
) -> Control {
    let stops = state.options.stops_at();
    if !stops.is_empty()
        && let Some(end) = ends
            .clone()
            .find(|end| end.counts == Counts::Success && stops.iter().any(|s| s == end.name))
    {
        return Control::Stop {
            tool: end.name.to_owned(),
            text: end.text.to_owned(),
        };
    }
    for end in ends {
        match end.counts {
            Counts::Neither => {}
            // A success starts its tool's count over.
            Counts::Success => {
                if !state.failures.is_empty() {
                    state.failures.remove(end.name);
                }
            }
            Counts::Retry => {
                let Some(&tool) = shared.set.by_name.get(end.name) else {
                    continue;
                };
                let failures = state.failures.entry(end.name.to_owned()).or_insert(0);
                *failures += 1;
                let budget = shared.budgets[tool];
                if *failures > budget {
                    let error = RunError::new(
                        ErrorKind::RetriesExhausted,
                        format!(
                            "tool `{}` failed {failures} calls in a row, more than its retry \
                             budget of {budget}",
                            end.name
                        ),
                    )
                    .with_tool(end.name)
                    .with_call(end.id, end.violations.to_vec());
                    return Control::OverBudget(error);
                }
            }
        }
    }
    Control::Go
}
