//! The run loop that [`crate::Agent::run`] and [`crate::Agent::run_stream`] both drive:
//! discovery, then turns of one model request and its calls, to a final answer, a pause or an
//! error. `resume` continues a paused run ([`crate::Agent::resume`]).

mod answer;
mod resume;

pub(crate) use answer::Answering;
use answer::{ANSWER_NAME, Correction};

use resume::PausedTurn;

use std::borrow::Cow;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tool_core::error::find_in_chain;
use tool_core::{Context, ErrorKind, OutcomeKind, Panicked, ToolError};
use tracing::Instrument;

use super::calls::{Batch, CallsEnd, run_calls};
use super::error::RunError;
use super::event::{RunEvent, Sink};
use super::options::RunOptions;
use super::output::{CallRecord, RunOutput};
use super::pause::{
    AdvertisedTool, Answered, Content, Decisions, PausedRun, PendingCall, PendingKind, fingerprint,
};
use super::reply::{ReplyError, read_reply};
use super::shared::Shared;
use super::spans;
use crate::model::{
    FinishReason, Input, Message, ModelRequest, ToolChoice, ToolResult, ToolSpec, Usage,
    check_transcript,
};

/// What the model reads for a call that did not run because the run reached its limit on
/// tool calls (L2).
const NOT_RUN: &str = "the call did not run: the run reached its limit of tool calls";

/// What the model reads for a call that did not run because the same turn gave the final
/// answer (O2).
const NOT_RUN_ANSWERED: &str = "the call did not run: the run ended with its final answer";

/// Where a run starts: a conversation, or a paused run with the decisions for its pending
/// calls.
pub(crate) enum Start {
    /// A new run of this conversation, with its own options or the agent's, and how it gets
    /// a typed answer if it wants one (O2).
    Fresh(Input, Option<RunOptions>, Option<Box<Answering>>),
    /// A paused run, resumed (H3, H4).
    Resume(Box<PausedRun>, Decisions),
}

/// Runs one conversation to its end, inside `span` (the run's span, which gets the number of
/// turns, the usage and the outcome recorded, K2).
pub(crate) async fn run(
    shared: Arc<Shared>,
    ctx: Context,
    start: Start,
    sink: Sink,
    span: tracing::Span,
) -> Result<RunOutput, RunError> {
    let mut run = Run {
        shared: &shared,
        ctx: &ctx,
        sink: &sink,
        transcript: Vec::new(),
        calls: Vec::new(),
        usage: Vec::new(),
        own_options: None,
        failures: Vec::new(),
        stopped_at: None,
        answering: None,
    };
    let result = match start {
        Start::Fresh(input, options, answering) => {
            run.own_options = options;
            run.answering = answering.map(|answering| *answering);
            let (transcript, checked) = input.into_parts();
            run.transcript = transcript;
            run.drive(checked).instrument(span.clone()).await
        }
        Start::Resume(paused, decisions) => {
            run.resume(*paused, decisions)
                .instrument(span.clone())
                .await
        }
    };
    spans::record_run(&span, &result);
    if let Err(e) = &result {
        span.in_scope(|| {
            tracing::debug!(
                kind = %e.kind(),
                error = %format_args!("{e:#}"),
                "run ended without an answer"
            );
        });
    }
    result
}

/// Discovery (A2, A3): every policy once, in declaration order, before any model I/O.
/// Returns, for each tool, whether it is advertised.
///
/// # Cancel safety
///
/// Returns kind `Cancelled` as soon as `ctx` is cancelled.
pub(crate) async fn discover(shared: &Shared, ctx: &Context) -> Result<Vec<bool>, RunError> {
    if ctx.is_cancelled() {
        return Err(cancelled());
    }
    // A1: a tool without a policy is available; there is nothing to ask it. Only the tools
    // with a policy are asked, in declaration order.
    let mut visible = vec![true; shared.tools.len()];
    for &at in &shared.with_policy {
        let tool = &shared.tools[at];
        let checked = tokio::select! {
            biased;
            () = ctx.cancelled() => return Err(cancelled()),
            checked = tool.available(ctx) => checked,
        };
        match checked {
            Ok(shown) => {
                tracing::debug!(tool = tool.name(), available = shown, "discovery");
                visible[at] = shown;
            }
            Err(cause) => {
                let panicked = find_in_chain::<Panicked>(&*cause).is_some();
                let (kind, what) = if panicked {
                    (ErrorKind::Panic, "panicked")
                } else {
                    (ErrorKind::Availability, "failed")
                };
                return Err(RunError::with_source(
                    kind,
                    format!(
                        "the availability policy of `{}` {what} at discovery; no model request was made",
                        tool.name()
                    ),
                    cause,
                )
                .with_tool(tool.name()));
            }
        }
    }
    Ok(visible)
}

fn cancelled() -> RunError {
    RunError::new(ErrorKind::Cancelled, "the run was cancelled by its caller")
}

/// The state of one run.
struct Run<'a> {
    shared: &'a Shared,
    ctx: &'a Context,
    sink: &'a Sink,
    transcript: Vec<Message>,
    calls: Vec<CallRecord>,
    usage: Vec<Usage>,
    /// The run's own options, when it was started with some (else the agent's).
    own_options: Option<RunOptions>,
    /// Each tool's failed calls in a row (L1), by tool index; empty until one fails.
    failures: Vec<u32>,
    /// The tool whose success ended the run (L5).
    stopped_at: Option<String>,
    /// How the run gets its typed answer (O2), if it wants one.
    answering: Option<Answering>,
}

impl Run<'_> {
    /// A fresh run, whose first `checked` messages a run wrote (a closed conversation, not
    /// checked again).
    async fn drive(&mut self, checked: usize) -> Result<RunOutput, RunError> {
        let added = self.transcript.get(checked..).unwrap_or(&self.transcript);
        if let Err(e) = check_transcript(added) {
            return Err(self.fail(e.into()));
        }
        let visible = match discover(self.shared, self.ctx).await {
            Ok(visible) => visible,
            Err(e) => return Err(self.fail(e)),
        };
        self.turns(1, visible, None).await
    }

    /// Turns from `first` on, with the tools `visible` says were advertised: to the final
    /// answer, a pause, or an error. A resumed run first finishes its `paused` turn.
    async fn turns(
        &mut self,
        first: usize,
        visible: Vec<bool>,
        paused: Option<PausedTurn>,
    ) -> Result<RunOutput, RunError> {
        // A8: the advertised list is fixed here, for the whole run. A run that shows every
        // tool shares the agent's list and names instead of copying them.
        let answer_tool = self.answering.as_ref().and_then(|a| a.tool.clone());
        let every = !visible.contains(&false);
        let (advertised, names): (Cow<'_, [ToolSpec]>, Arc<[String]>) =
            if every && answer_tool.is_none() {
                (
                    Cow::Borrowed(&self.shared.specs),
                    Arc::clone(&self.shared.names),
                )
            } else {
                let mut advertised: Vec<ToolSpec> = self
                    .shared
                    .specs
                    .iter()
                    .zip(&visible)
                    .filter(|(_, shown)| **shown)
                    .map(|(spec, _)| spec.clone())
                    .collect();
                let names = advertised.iter().map(|s| s.name().to_owned()).collect();
                // O2: the final-answer tool, offered beside the agent's tools.
                advertised.extend(answer_tool);
                (Cow::Owned(advertised), names)
            };
        self.sink.emit(|| RunEvent::Started {
            advertised: Arc::clone(&names),
        });
        let slots = Semaphore::new(self.shared.max_concurrency);
        if let Some(paused) = paused {
            // A resumed run: the paused turn's decided calls first (H4, H5).
            self.finish_paused_turn(paused, &visible, &slots).await?;
        }
        for turn in first..=self.shared.max_turns {
            // L2: no request is sent that a limit forbids.
            if let Some(limit) = self.options().usage_limits().before_request(&self.usage) {
                let error = RunError::new(
                    ErrorKind::UsageLimit,
                    format!("the run reached {limit}; request {turn} was not sent"),
                );
                return Err(self.fail(error));
            }
            let mut choice = self.options().choice_for(turn, first).cloned();
            // O2: a run whose answer comes through the final-answer tool must call a tool.
            if choice.is_none() && self.answering.as_ref().is_some_and(|a| !a.native()) {
                choice = Some(ToolChoice::Required);
            }
            let step = self.turn(turn, &advertised, &visible, &slots, choice.as_ref());
            if let Some(text) = step.await? {
                return Ok(RunOutput {
                    text,
                    written: self.transcript.len(),
                    transcript: std::mem::take(&mut self.transcript),
                    usage: std::mem::take(&mut self.usage),
                    calls: std::mem::take(&mut self.calls),
                    advertised: names,
                    stopped_at: self.stopped_at.take(),
                });
            }
        }
        let limit = self.shared.max_turns;
        Err(self.fail(RunError::new(
            ErrorKind::MaxTurns,
            format!("the run reached its limit of {limit} turns without a final answer"),
        )))
    }

    /// One turn: a request, then its calls. Returns the final answer, if this was it.
    async fn turn(
        &mut self,
        turn: usize,
        advertised: &[ToolSpec],
        visible: &[bool],
        slots: &Semaphore,
        choice: Option<&ToolChoice>,
    ) -> Result<Option<String>, RunError> {
        let native = self
            .answering
            .as_ref()
            .filter(|answering| answering.native())
            .map(|answering| &answering.format);
        let request = ModelRequest::new(&self.transcript, advertised)
            .with_instructions(self.shared.instructions.as_deref())
            .with_tool_choice(choice)
            .with_answer(native);
        // K2: the request has a `chat` span of its own; the calls are its siblings.
        let chat = spans::chat(self.shared, turn);
        let stream = chat.in_scope(|| self.shared.model.stream(request));
        let reply = read_reply(stream, self.ctx, self.sink, turn)
            .instrument(chat.clone())
            .await;
        spans::record_reply(&chat, &reply);
        let reply = match reply {
            Ok(reply) => reply,
            Err(ReplyError::Cancelled) => return Err(self.fail(cancelled())),
            Err(ReplyError::Model(e)) => return Err(self.fail(e.into())),
            Err(ReplyError::Protocol(e)) => return Err(self.fail(e.into())),
        };
        self.usage.push(reply.usage);
        for (index, call) in reply.calls.iter().enumerate() {
            self.sink.emit(|| RunEvent::ToolCall {
                turn,
                index,
                call: call.clone(),
            });
        }
        let turn_end = || RunEvent::TurnEnd {
            turn,
            usage: reply.usage,
            finish: reply.finish.clone(),
        };
        if reply.calls.is_empty() {
            self.transcript.push(Message::assistant(reply.text.clone()));
            self.sink.emit(turn_end);
            if reply.finish == Some(FinishReason::Length) {
                // A reply cut at the output token limit is not an answer: the run ends with
                // kind `Truncated`, keeping the partial text (in the error and the transcript)
                // and the usage.
                let error = RunError::new(
                    ErrorKind::Truncated,
                    "the model's final reply was cut off at its output token limit",
                )
                .with_partial_text(reply.text);
                return Err(self.fail(error));
            }
            // O2: the text is the typed answer (native), or should have been a call.
            if let Some(mut answering) = self.answering.take() {
                let judged = if answering.native() {
                    answering.judge(&reply.text)
                } else {
                    Err(answering.text_instead_of_call())
                };
                self.answering = Some(answering);
                return match judged {
                    Ok(()) => Ok(Some(reply.text)),
                    Err(Correction::Retry(message)) => {
                        self.transcript.push(Message::user(message));
                        Ok(None)
                    }
                    Err(Correction::GiveUp(error)) => Err(self.fail(*error)),
                };
            }
            return Ok(Some(reply.text));
        }
        // O2: a call of the final-answer tool ends the run when its answer fits.
        if let Some(at) = self
            .answering
            .as_ref()
            .filter(|answering| !answering.native())
            .and_then(|_| reply.calls.iter().position(|call| call.name == ANSWER_NAME))
        {
            self.transcript.push(Message::assistant_with_calls(
                reply.text.clone(),
                reply.calls.clone(),
            ));
            return self
                .final_call(turn, &reply.calls, at, visible, slots, turn_end)
                .await;
        }

        // L2: the turn's calls would cross the limit on calls: none runs, each is answered so
        // that the transcript stays whole, and the run ends.
        let made = self.calls.len() as u64;
        if let Some(limit) = self
            .options()
            .usage_limits()
            .before_calls(made, reply.calls.len() as u64)
        {
            let not_run: Vec<Message> = reply
                .calls
                .iter()
                .map(|call| {
                    Message::Tool(ToolResult::new(
                        call.id.clone(),
                        call.name.clone(),
                        NOT_RUN,
                        true,
                    ))
                })
                .collect();
            self.transcript
                .push(Message::assistant_with_calls(reply.text, reply.calls));
            self.transcript.extend(not_run);
            self.sink.emit(turn_end);
            let error = RunError::new(
                ErrorKind::UsageLimit,
                format!("the run reached {limit}; the calls of turn {turn} did not run"),
            );
            return Err(self.fail(error));
        }
        let (records, end) = run_calls(
            self.shared,
            self.ctx,
            Batch::turn(&reply.calls),
            visible,
            turn,
            slots,
            self.sink,
        )
        .await;
        // The assistant's message takes the calls, which ran from the reply.
        self.transcript
            .push(Message::assistant_with_calls(reply.text, reply.calls));
        // H2: the calls that needed no decision ran; the run pauses with the others. Only an
        // agent holding a tool that can pause looks.
        if self.shared.pauses
            && end == CallsEnd::Done
            && records.iter().any(|record| record.outcome.is_pending())
        {
            self.sink.emit(turn_end);
            return Err(self.pause(turn, visible, records));
        }
        let answered = self.answer(records, end);
        self.sink.emit(turn_end);
        answered
    }

    /// A turn whose call at `at` is the final-answer tool's (O2): an answer that fits ends the
    /// run (the turn's other calls do not run); one that does not goes back to the model with
    /// its violations, in the model's order among the results of the other calls, which run.
    async fn final_call(
        &mut self,
        turn: usize,
        calls: &[crate::model::ToolCall],
        at: usize,
        visible: &[bool],
        slots: &Semaphore,
        turn_end: impl FnOnce() -> RunEvent,
    ) -> Result<Option<String>, RunError> {
        let Some(mut answering) = self.answering.take() else {
            return Ok(None);
        };
        let judged = answering.judge(&calls[at].arguments);
        self.answering = Some(answering);
        let message = match judged {
            Ok(()) => {
                for (i, call) in calls.iter().enumerate() {
                    let (text, failed) = if i == at {
                        ("the final answer was received", false)
                    } else {
                        (NOT_RUN_ANSWERED, true)
                    };
                    self.transcript.push(Message::Tool(ToolResult::new(
                        call.id.clone(),
                        call.name.clone(),
                        text,
                        failed,
                    )));
                }
                self.sink.emit(turn_end);
                return Ok(Some(calls[at].arguments.clone()));
            }
            Err(Correction::GiveUp(error)) => {
                for call in calls {
                    self.transcript.push(Message::Tool(ToolResult::new(
                        call.id.clone(),
                        call.name.clone(),
                        NOT_RUN_ANSWERED,
                        true,
                    )));
                }
                self.sink.emit(turn_end);
                return Err(self.fail(*error));
            }
            Err(Correction::Retry(message)) => message,
        };
        let others: Vec<crate::model::ToolCall> = calls
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != at)
            .map(|(_, call)| call.clone())
            .collect();
        let (records, end) = run_calls(
            self.shared,
            self.ctx,
            Batch::turn(&others),
            visible,
            turn,
            slots,
            self.sink,
        )
        .await;
        let before = self.transcript.len();
        let answered = self.answer(records, end);
        // The answer's violations, at its place among the results (R2).
        let place = (before + at).min(self.transcript.len());
        self.transcript.insert(
            place,
            Message::Tool(ToolResult::new(
                calls[at].id.clone(),
                ANSWER_NAME,
                message,
                true,
            )),
        );
        self.sink.emit(turn_end);
        answered
    }

    /// Puts a turn's call records in the transcript (in the model's order, R2) and the
    /// run's record; ends the run if the turn did.
    fn answer(
        &mut self,
        records: Vec<CallRecord>,
        end: CallsEnd,
    ) -> Result<Option<String>, RunError> {
        let first = self.calls.len();
        for record in records {
            self.transcript.push(Message::Tool(
                ToolResult::new(
                    record.id.clone(),
                    record.name.clone(),
                    record.text(),
                    record.kind() != OutcomeKind::Success,
                )
                .with_images(record.outcome.images().to_vec()),
            ));
            self.calls.push(record);
        }
        match end {
            CallsEnd::Done => {}
            CallsEnd::Cancelled => return Err(self.fail(cancelled())),
            CallsEnd::Fatal(index) => {
                let record = &self.calls[first + index];
                let error = match record.error() {
                    Some(error) => RunError::from_call(error.clone(), &record.name, &record.id),
                    None => RunError::new(ErrorKind::Permanent, "a call failed fatally")
                        .with_tool(&record.name),
                };
                return Err(self.fail(error));
            }
        }
        // L5: a stopping tool's success is the run's output; no further request.
        if let Some(text) = self.stop(first) {
            return Ok(Some(text));
        }
        // L1: a tool that failed more calls in a row than its budget ends the run.
        match self.over_budget(first) {
            Some(error) => Err(self.fail(error)),
            None => Ok(None),
        }
    }

    /// The options this run follows: its own, else the agent's.
    fn options(&self) -> &RunOptions {
        self.own_options.as_ref().unwrap_or(&self.shared.options)
    }

    /// The result of the first successful call (from `first` on) of a tool the run stops at
    /// (L5), noting the tool.
    fn stop(&mut self, first: usize) -> Option<String> {
        let stops = self.options().stops_at();
        if stops.is_empty() {
            return None;
        }
        let record = self.calls[first..]
            .iter()
            .find(|record| record.kind() == OutcomeKind::Success && stops.contains(&record.name))?;
        let (name, text) = (record.name.clone(), record.text().to_owned());
        self.stopped_at = Some(name);
        Some(text)
    }

    /// Counts the failed calls in a row of each tool, from the records at `first` on (L1):
    /// invalid arguments or a handler's [`ToolError::retry`] count, a success starts over.
    /// The failure that ends the run when a tool goes past its budget.
    fn over_budget(&mut self, first: usize) -> Option<RunError> {
        for record in &self.calls[first..] {
            let failed = match record.kind() {
                OutcomeKind::InvalidArguments => true,
                OutcomeKind::Rejected => record
                    .error()
                    .and_then(|error| error.tool_error())
                    .is_some_and(ToolError::asks_retry),
                // A success starts its tool's count over; nothing to count before a failure.
                OutcomeKind::Success => {
                    if !self.failures.is_empty()
                        && let Some(&tool) = self.shared.by_name.get(&record.name)
                    {
                        self.failures[tool] = 0;
                    }
                    false
                }
                _ => false,
            };
            if !failed {
                continue;
            }
            let Some(&tool) = self.shared.by_name.get(&record.name) else {
                continue;
            };
            if self.failures.is_empty() {
                self.failures = vec![0; self.shared.tools.len()];
            }
            self.failures[tool] += 1;
            let budget = self.shared.budgets[tool];
            if self.failures[tool] > budget {
                let error = RunError::new(
                    ErrorKind::RetriesExhausted,
                    format!(
                        "tool `{}` failed {} calls in a row, more than its retry budget of {budget}",
                        record.name, self.failures[tool]
                    ),
                )
                .with_tool(&record.name)
                .with_call(&record.id, record.violations().to_vec());
                return Some(error);
            }
        }
        None
    }

    /// Pauses the run at `turn` (H2, H5): the results of the calls that ran and the pending
    /// calls go into a sealed [`PausedRun`] with the transcript, the advertised tools and the
    /// usage; the records of every call stay with the application (E3), never in the state.
    fn pause(&mut self, turn: usize, visible: &[bool], records: Vec<CallRecord>) -> RunError {
        let mut results = Vec::new();
        let mut pending = Vec::new();
        for record in records {
            let kind = match record.kind() {
                OutcomeKind::AwaitingApproval => Some(PendingKind::Approval),
                OutcomeKind::Deferred => Some(PendingKind::Deferred),
                _ => None,
            };
            match kind {
                Some(kind) => pending.push(PendingCall::new(
                    record.index,
                    &record.id,
                    &record.name,
                    record
                        .outcome
                        .validated_arguments()
                        .cloned()
                        .unwrap_or_default(),
                    kind,
                    record.outcome.approval_reason(),
                )),
                None => results.push(Answered {
                    index: record.index,
                    result: ToolResult::new(
                        record.id.clone(),
                        record.name.clone(),
                        record.text(),
                        record.kind() != OutcomeKind::Success,
                    )
                    .with_images(record.outcome.images().to_vec()),
                }),
            }
            self.calls.push(record);
        }
        let tools = self
            .shared
            .tools
            .iter()
            .zip(visible)
            .filter(|(_, shown)| **shown)
            .map(|(tool, _)| AdvertisedTool {
                name: tool.name().to_owned(),
                fingerprint: fingerprint(tool),
            })
            .collect();
        tracing::info!(
            pending = pending.len(),
            "the run paused: calls await a decision or a result"
        );
        let content = Content {
            tools,
            turn,
            usage: std::mem::take(&mut self.usage),
            transcript: std::mem::take(&mut self.transcript),
            results,
            pending,
        };
        let paused = PausedRun::seal(content, self.shared.state_key.as_deref());
        RunError::pause(paused, std::mem::take(&mut self.calls))
    }

    /// `error`, with the transcript, calls and usage so far.
    fn fail(&mut self, error: RunError) -> RunError {
        error.with_run(
            std::mem::take(&mut self.transcript),
            std::mem::take(&mut self.calls),
            std::mem::take(&mut self.usage),
        )
    }
}
