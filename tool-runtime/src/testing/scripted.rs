//! [`ScriptedModel`]: a model whose replies are written in advance, and which records every
//! request it receives, for tests.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_core::Stream;

use super::reply_events;
use crate::model::{
    AnswerFormat, FinishReason, Message, Model, ModelError, ModelEvent, ModelRequest, ModelStream,
    ToolCall, ToolChoice, ToolResult, ToolSpec, Usage,
};

/// A model that replies with turns given in advance, one per request, and records every
/// request (the tools advertised, the messages, the tool results), so a test can assert what
/// the model was shown.
///
/// Each turn streams as real deltas: its text in pieces, each call's raw arguments in
/// fragments. Arguments are sent exactly as scripted, malformed ones included. A request after
/// the last turn fails with [`ModelError::ScriptExhausted`].
///
/// Clones share the script and the record: keep a clone to inspect it after the run.
///
/// ```
/// use tool_runtime::{ScriptedModel, ScriptedTurn};
///
/// let model = ScriptedModel::new([
///     ScriptedTurn::new()
///         .text("Let me look.")
///         .call("c1", "lookup-window", r#"{"service_id":"svc-42"}"#)
///         .call("c2", "lookup-window", "not json at all")
///         .usage(120, 30),
///     ScriptedTurn::reply("svc-42 is down on Tuesday."),
/// ]);
/// assert_eq!(model.remaining(), 2);
/// ```
#[derive(Clone, Default)]
pub struct ScriptedModel {
    state: Arc<Mutex<State>>,
    native_answers: bool,
    native_tool_search: bool,
}

#[derive(Default)]
struct State {
    turns: VecDeque<ScriptedTurn>,
    scripted: usize,
    requests: Vec<RecordedRequest>,
}

impl ScriptedModel {
    /// A model that replies with `turns`, in order.
    pub fn new(turns: impl IntoIterator<Item = ScriptedTurn>) -> Self {
        let turns: VecDeque<_> = turns.into_iter().collect();
        let scripted = turns.len();
        Self {
            state: Arc::new(Mutex::new(State {
                turns,
                scripted,
                requests: Vec::new(),
            })),
            native_answers: false,
            native_tool_search: false,
        }
    }

    /// Says that this model takes a typed answer natively (O2): a run asking for one then
    /// sends its format with each request ([`RecordedRequest::answer`]) and reads the final
    /// text as the answer's JSON, rather than offering a final-answer tool.
    #[must_use]
    pub fn with_native_answers(mut self) -> Self {
        self.native_answers = true;
        self
    }

    /// Says that this model's provider runs its own tool search (Q1): a run then sends its
    /// deferred tools marked [`ToolSpec::defers_loading`] instead of offering the local search
    /// tool, and loads what a [`ModelEvent::ToolsLoaded`] of a scripted turn names.
    #[must_use]
    pub fn with_native_tool_search(mut self) -> Self {
        self.native_tool_search = true;
        self
    }

    /// Adds a turn at the end of the script.
    pub fn push(&self, turn: ScriptedTurn) {
        let mut state = self.lock();
        state.turns.push_back(turn);
        state.scripted += 1;
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// How many requests were received.
    pub fn request_count(&self) -> usize {
        self.lock().requests.len()
    }

    /// How many scripted turns are left.
    pub fn remaining(&self) -> usize {
        self.lock().turns.len()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("ScriptedModel")
            .field("remaining", &state.turns.len())
            .field("requests", &state.requests.len())
            .finish()
    }
}

impl Model for ScriptedModel {
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let mut state = self.lock();
        state.requests.push(RecordedRequest {
            instructions: request.instructions.map(str::to_owned),
            messages: request.messages.to_vec(),
            tools: request.tools.to_vec(),
            tool_choice: request.tool_choice.cloned(),
            answer: request.answer.cloned(),
        });
        let number = state.requests.len();
        let scripted = state.scripted;
        let stream = match state.turns.pop_front() {
            Some(turn) => ScriptStream::new(turn),
            None => ScriptStream::failing(ModelError::ScriptExhausted {
                request: number,
                scripted,
            }),
        };
        Box::pin(stream)
    }

    fn native_answers(&self) -> bool {
        self.native_answers
    }

    fn native_tool_search(&self) -> bool {
        self.native_tool_search
    }

    /// `scripted`, for telemetry (K2): no provider serves it.
    fn provider_name(&self) -> &str {
        "scripted"
    }

    /// `scripted`, for telemetry (K2).
    fn model_name(&self) -> &str {
        "scripted"
    }
}

/// One request as a [`ScriptedModel`] received it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The instructions sent.
    pub instructions: Option<String>,
    /// The conversation sent.
    pub messages: Vec<Message>,
    /// The tools advertised.
    pub tools: Vec<ToolSpec>,
    /// The tool choice of the request (L3), if it had one.
    pub tool_choice: Option<ToolChoice>,
    /// The form asked for the final answer (O2), for a model with native answers.
    pub answer: Option<AnswerFormat>,
}

impl RecordedRequest {
    /// The names of the tools advertised, in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(ToolSpec::name).collect()
    }

    /// The tool results at the end of the conversation: what the model got back from its
    /// last turn's calls, in call order.
    pub fn tool_results(&self) -> Vec<&ToolResult> {
        let tail = self
            .messages
            .iter()
            .rev()
            .take_while(|m| matches!(m, Message::Tool(_)))
            .count();
        self.messages[self.messages.len() - tail..]
            .iter()
            .filter_map(Message::tool_result)
            .collect()
    }
}

/// One scripted reply: text, tool calls with raw arguments, usage, a delay, a failure.
#[derive(Debug, Default)]
#[must_use = "a turn does nothing until it is given to a ScriptedModel"]
pub struct ScriptedTurn {
    text: String,
    calls: Vec<ToolCall>,
    events: Vec<ModelEvent>,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
    delay: Option<Duration>,
    failure: Option<ModelError>,
    hang: bool,
}

impl ScriptedTurn {
    /// An empty turn (an empty final answer, unless calls are added).
    pub fn new() -> Self {
        Self::default()
    }

    /// A final answer with this text.
    pub fn reply(text: impl Into<String>) -> Self {
        Self::new().text(text)
    }

    /// Appends text to the reply.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.text.push_str(&text.into());
        self
    }

    /// Adds a call of `name` with id `id` and these raw arguments (sent as they are, even
    /// when they are not JSON).
    pub fn call(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        self.calls
            .push(ToolCall::new(id.into(), name.into(), arguments));
        self
    }

    /// Sends these raw events after the scripted text and calls (and before usage and the
    /// finish reason), to test how the agent takes a reply that breaks the protocol.
    pub fn event(mut self, event: ModelEvent) -> Self {
        self.events.push(event);
        self
    }

    /// Reports this usage for the turn.
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = Some(Usage::new(input_tokens, output_tokens));
        self
    }

    /// Ends the turn with this finish reason instead of the usual one (`Stop`, or `ToolCalls`
    /// when the turn has calls): `FinishReason::Length` scripts a reply cut off at the output
    /// token limit.
    pub fn finish(mut self, reason: FinishReason) -> Self {
        self.finish = Some(reason);
        self
    }

    /// Waits this long (on tokio's clock, so paused time skips it) before the first delta.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// Fails with `error` after the scripted deltas.
    pub fn fail(mut self, error: ModelError) -> Self {
        self.failure = Some(error);
        self
    }

    /// Never ends: after its deltas, the reply stays pending (for cancellation tests).
    pub fn hang(mut self) -> Self {
        self.hang = true;
        self
    }
}

/// The stream of one scripted turn.
struct ScriptStream {
    delay: Option<Duration>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    items: VecDeque<Result<ModelEvent, ModelError>>,
    hang: bool,
}

impl ScriptStream {
    fn new(turn: ScriptedTurn) -> Self {
        let mut events = reply_events(&turn.text, &turn.calls, None);
        let usual = events.pop();
        let finish = turn.finish.map(ModelEvent::Finish).or(usual);
        events.extend(turn.events);
        if let Some(usage) = turn.usage {
            events.push(ModelEvent::Usage(usage));
        }
        let mut items: VecDeque<_> = events.into_iter().map(Ok).collect();
        match turn.failure {
            Some(error) => items.push_back(Err(error)),
            None if !turn.hang => items.extend(finish.map(Ok)),
            None => {}
        }
        Self {
            delay: turn.delay,
            sleep: None,
            items,
            hang: turn.hang,
        }
    }

    fn failing(error: ModelError) -> Self {
        Self {
            delay: None,
            sleep: None,
            items: VecDeque::from([Err(error)]),
            hang: false,
        }
    }
}

impl Stream for ScriptStream {
    type Item = Result<ModelEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        if let Some(delay) = self.delay.take() {
            self.sleep = Some(Box::pin(tokio::time::sleep(delay)));
        }
        if let Some(sleep) = self.sleep.as_mut() {
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.sleep = None;
        }
        match self.items.pop_front() {
            Some(item) => Poll::Ready(Some(item)),
            // Pending without a waker: only cancellation (a dropped stream) ends it.
            None if self.hang => Poll::Pending,
            None => Poll::Ready(None),
        }
    }
}
