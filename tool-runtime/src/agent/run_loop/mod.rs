//! The run loop that [`crate::Agent::run`] and [`crate::Agent::run_stream`] both drive:
//! discovery, then turns of one model request and its calls, to a final answer, a pause or an
//! error. `resume` continues a paused run ([`crate::Agent::resume`]).

mod answer;
mod control;
mod decide;
mod final_answer;
mod nested;
mod offer;
mod pausing;
mod resume;

pub(crate) use answer::{ANSWER_NAME, Answering};

use offer::Offer;
use resume::PausedTurn;

use std::sync::Arc;

use tool_core::{Context, ErrorKind};
use tracing::Instrument;

use super::batch::{Batch, CallsEnd};
use super::calls::targets;
use super::catalog::{self, RunScope};
use super::compose::nest::{Nest, Nesting, request_used};
use super::discovery::cancelled;
use super::effects::{Journaled, Live};
use super::env::{Effects, Env};
use super::error::RunError;
use super::event::{RunEvent, Sink};
use super::journal::Journal;
use super::options::{NestedUsage, RunOptions};
use super::output::{CallRecord, RunOutput};
use super::pause::{Decisions, PausedRun, ResumeOptions};
use super::repair;
use super::reply::{Reply, ReplyError};
use super::shared::Shared;
use super::spans;
use super::state::{CallEnd, RunState};
use crate::model::{Input, Message, ModelRequest, ToolChoice, check_transcript};

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
    /// A paused run, resumed (H3, H4, H7) with what the resume adds, and the typed answer it
    /// names (O2).
    Resume(
        Box<PausedRun>,
        Decisions,
        ResumeOptions,
        Option<Box<Answering>>,
    ),
}

/// Runs one conversation to its end, inside `span` (the run's span, which gets the number of
/// turns, the usage and the outcome recorded, K2).
pub(crate) async fn run(
    shared: Arc<Shared>,
    ctx: Context,
    start: Start,
    sink: Sink,
    span: tracing::Span,
    journal: Option<&dyn Journal>,
) -> Result<RunOutput, RunError> {
    // U2, W1: the one place where a run's effects are chosen.
    let journaled;
    let effects: &dyn Effects = match journal {
        Some(journal) => {
            journaled = Journaled(journal);
            &journaled
        }
        None => &Live,
    };
    // B1: a sub-agent's run reports to its parent's nest (found in `ctx`), and its events
    // join its parent's, under the call that started it.
    let parent = ctx
        .get::<Nesting>()
        .and_then(|nesting| nesting.parent.clone());
    let sink = match (&parent, ctx.call()) {
        (Some(parent), Some(call)) if !sink.is_active() => parent.sink_for(call.id.clone()),
        _ => sink,
    };
    let (ctx, nest) = nesting(ctx, &shared, &sink);
    let (nest, parent) = (nest.as_deref(), parent.as_deref());
    let result = match start {
        Start::Fresh(input, options, answering) => {
            let answering = answering.map(|answering| *answering);
            let (transcript, checked) = input.into_parts();
            let mut state = RunState::new(
                options.unwrap_or_else(|| shared.options.clone()),
                shared.max_turns,
                transcript,
                answering
                    .as_ref()
                    .map(|answering| answering.start(shared.default_retries)),
            );
            // W1: a durable run's id is its journal's, the same on every replay.
            if let Some(id) = effects.run_id() {
                id.clone_into(&mut state.run_id);
            }
            spans::record_run_id(&span, &state.run_id);
            let ctx = run_context(ctx, &state.run_id, &shared);
            let env = Env {
                shared: &shared,
                ctx: &ctx,
                sink: &sink,
                effects,
                nest,
                parent,
            };
            let mut run = Run::new(env, state, answering);
            run.drive(checked).instrument(span.clone()).await
        }
        Start::Resume(paused, decisions, options, answering) => {
            let answering = answering.map(|answering| *answering);
            let ctx = run_context(ctx, paused.run_id(), &shared);
            let env = Env {
                shared: &shared,
                ctx: &ctx,
                sink: &sink,
                effects,
                nest,
                parent,
            };
            resume::resume(env, *paused, decisions, options, answering, &span)
                .instrument(span.clone())
                .await
        }
    };
    record_end(&span, &result);
    result
}

/// The context of the run `run_id`'s calls: every call knows the run's id (W2), asks through
/// the agent's elicitor and answerers, and sees the run's search scope (Q1).
fn run_context(ctx: Context, run_id: &str, shared: &Arc<Shared>) -> Context {
    with_scope(with_elicitor(ctx.for_run(run_id), shared), shared)
}

/// Records how the run ended on its span (K2), and why when it has no answer.
fn record_end(span: &tracing::Span, result: &Result<RunOutput, RunError>) {
    spans::record_run(span, result);
    if let Err(e) = result {
        span.in_scope(|| {
            tracing::debug!(
                kind = %e.kind(),
                error = %format_args!("{e:#}"),
                "run ended without an answer"
            );
        });
    }
}

/// B1: a run holding sub-agents shares its nest with its calls, through the context it
/// returns; the events of its sub-agents' runs go to `sink`, its own.
fn nesting(ctx: Context, shared: &Shared, sink: &Sink) -> (Context, Option<Arc<Nest>>) {
    let nest = shared.composes().then(|| Arc::new(Nest::new(sink.clone())));
    let ctx = match &nest {
        Some(nest) => ctx.with(Nesting {
            own: Some(Arc::clone(nest)),
            parent: None,
        }),
        None => ctx,
    };
    (ctx, nest)
}

/// `ctx`, asking its handlers' questions through the agent's elicitor when it names none of
/// its own (M3), and its sampling requests and roots as the agent says (M8).
fn with_elicitor(ctx: Context, shared: &Arc<Shared>) -> Context {
    let ctx = match &shared.elicitor {
        Some(elicitor) if !ctx.can_elicit() => ctx.with_elicitor(Arc::clone(elicitor)),
        _ => ctx,
    };
    // M8: and its sampling requests and roots through the agent's.
    super::sampling::with_answerers(ctx, shared)
}

/// `ctx`, holding the run's scope for the search tool when the agent has deferred tools (Q1).
fn with_scope(ctx: Context, shared: &Shared) -> Context {
    match &shared.catalog {
        Some(_) => ctx.with(RunScope::default()),
        None => ctx,
    }
}

/// One run: its state (H7), which a pause seals, beside what this process keeps of it.
struct Run<'a> {
    /// What the run borrows: the agent, the caller's context, the event sink, the effects.
    env: Env<'a>,
    /// Everything that governs the run (H7).
    state: RunState,
    /// The records of the calls this process made (E3): never in a paused run.
    calls: Vec<CallRecord>,
    /// The tool whose success ended the run (L5).
    stopped_at: Option<String>,
    /// How the run checks its typed answer (O2), if it wants one; the answer's counters are
    /// in `state`.
    answering: Option<Answering>,
    /// The paused runs of the sub-agents of the turn's calls, by call id (B2).
    nested: std::collections::HashMap<String, super::pause::PausedRun>,
}

impl<'a> Run<'a> {
    fn new(env: Env<'a>, state: RunState, answering: Option<Answering>) -> Self {
        Self {
            env,
            state,
            calls: Vec::new(),
            stopped_at: None,
            answering,
            nested: std::collections::HashMap::new(),
        }
    }

    /// A fresh run, whose first `checked` messages a run wrote (a closed conversation, not
    /// checked again).
    async fn drive(&mut self, checked: usize) -> Result<RunOutput, RunError> {
        let transcript = &self.state.transcript;
        let added = transcript.get(checked..).unwrap_or(transcript);
        if let Err(e) = check_transcript(added) {
            return Err(self.fail(e.into()));
        }
        let visible = match self.env.effects.discover(self.env).await {
            Ok(visible) => visible,
            Err(e) => return Err(self.fail(e)),
        };
        self.turns(visible, None).await
    }

    /// Turns from the state's next on, with the tools `visible` says were advertised: to the
    /// final answer, a pause, or an error. A resumed run first finishes its `paused` turn.
    async fn turns(
        &mut self,
        visible: Vec<bool>,
        paused: Option<PausedTurn>,
    ) -> Result<RunOutput, RunError> {
        // A8: what the run's policies offer is fixed here, for the whole run; of it, a
        // deferred tool is advertised once a search loaded it (Q1).
        let answer_tool = self.answering.as_ref().and_then(|a| a.tool.clone());
        let available: Arc<[bool]> = visible.into();
        if let Some(scope) = self.env.ctx.get::<RunScope>() {
            scope.offer(&available);
        }
        let mut offer = Offer::new(self.env.shared, available, &self.state.loaded, answer_tool);
        self.env.sink.emit(|| RunEvent::Started {
            advertised: Arc::clone(&offer.names),
        });
        if let Some(paused) = paused {
            // A resumed run: the paused turn's decided calls first (H4, H5), then run control
            // over the whole turn, as if it had not paused (H7).
            if let Some(text) = self.finish_paused_turn(paused, &offer).await? {
                return Ok(self.output(text, offer.names));
            }
        }
        loop {
            let turn = self.state.next_turn();
            if turn > self.state.max_turns {
                break;
            }
            // L2: no request is sent that a limit forbids.
            if let Some(limit) = self
                .state
                .options
                .usage_limits()
                .before_request(&self.state.usage, &self.state.nested)
            {
                let error = RunError::new(
                    ErrorKind::UsageLimit,
                    format!("the run reached {limit}; request {turn} was not sent"),
                );
                return Err(self.fail(error));
            }
            // L3: a forced choice is spent by the run's first request, whichever process
            // sends it (H7).
            let mut choice = self
                .state
                .options
                .choice_for(self.state.choice_spent)
                .cloned();
            if self.state.options.spends_choice() {
                self.state.choice_spent = true;
            }
            // O2: a run whose answer comes through the final-answer tool must call a tool.
            if choice.is_none() && self.answering.as_ref().is_some_and(|a| !a.native()) {
                choice = Some(ToolChoice::Required);
            }
            if let Some(text) = self.turn(turn, &mut offer, choice.as_ref()).await? {
                return Ok(self.output(text, offer.names));
            }
        }
        let limit = self.state.max_turns;
        Err(self.fail(RunError::new(
            ErrorKind::MaxTurns,
            format!("the run reached its limit of {limit} turns without a final answer"),
        )))
    }

    /// The run's output: its answer `text`, with what the run wrote and used.
    fn output(&mut self, text: String, advertised: Arc<[String]>) -> RunOutput {
        RunOutput {
            text,
            written: self.state.transcript.len(),
            transcript: std::mem::take(&mut self.state.transcript),
            usage: std::mem::take(&mut self.state.usage),
            calls: std::mem::take(&mut self.calls),
            advertised,
            stopped_at: self.stopped_at.take(),
        }
    }

    /// The request of turn `turn` and the model's reply, read whole (R1); the reply's usage
    /// counts toward the run's (L2).
    async fn request(
        &mut self,
        turn: usize,
        offer: &Offer<'_>,
        choice: Option<&ToolChoice>,
    ) -> Result<Reply, RunError> {
        let native = self
            .answering
            .as_ref()
            .filter(|answering| answering.native())
            .map(|answering| &answering.format);
        let request = ModelRequest::new(&self.state.transcript, &offer.specs)
            .with_instructions(self.env.shared.instructions.as_deref())
            .with_tool_choice(choice)
            .with_answer(native);
        // K2: the request has a `chat` span of its own; the calls are its siblings.
        let chat = spans::chat(self.env.shared, turn);
        let started = std::time::Instant::now();
        let reply = self
            .env
            .effects
            .request(self.env, request, turn, &chat)
            .instrument(chat.clone())
            .await;
        spans::record_reply(&chat, self.env.shared, &reply, started.elapsed());
        let reply = match reply {
            Ok(reply) => reply,
            Err(ReplyError::Cancelled) => return Err(self.fail(cancelled())),
            Err(ReplyError::Model(e)) => return Err(self.fail(e.into())),
            Err(ReplyError::Protocol(e)) => return Err(self.fail(e.into())),
            Err(ReplyError::Journal(e)) => return Err(self.fail(e.into())),
        };
        self.state.usage.push(reply.usage);
        if let Some(parent) = self.env.parent {
            parent.report(request_used(reply.usage));
        }
        for (index, call) in reply.calls.iter().enumerate() {
            self.env.sink.emit(|| RunEvent::ToolCall {
                turn,
                index,
                call: call.clone(),
            });
        }
        Ok(reply)
    }

    /// One turn: a request, then its calls. Returns the final answer, if this was it.
    async fn turn(
        &mut self,
        turn: usize,
        offer: &mut Offer<'a>,
        choice: Option<&ToolChoice>,
    ) -> Result<Option<String>, RunError> {
        let mut reply = self.request(turn, offer, choice).await?;
        // Q4: arguments that are not JSON are repaired before anything reads them, when the
        // agent asked for it.
        let repaired = match &self.env.shared.repair {
            Some(repair) => repair::repair_calls(&**repair, &mut reply.calls),
            None => Vec::new(),
        };
        // Q1: what the provider's own search loaded is callable from this reply on.
        self.load(offer, &reply.loaded);
        let turn_end = || RunEvent::TurnEnd {
            turn,
            usage: reply.usage,
            finish: reply.finish.clone(),
        };
        if reply.calls.is_empty() {
            return self.text_reply(reply.text, reply.finish.as_ref(), turn_end);
        }
        // O2: a call of the final-answer tool ends the run when its answer fits.
        if let Some(at) = self
            .answering
            .as_ref()
            .filter(|answering| !answering.native())
            .and_then(|_| {
                reply
                    .calls
                    .iter()
                    .position(|call| &*call.name == ANSWER_NAME)
            })
        {
            self.state.transcript.push(Message::assistant_with_calls(
                reply.text.clone(),
                reply.calls.clone(),
            ));
            return self
                .final_call(turn, &reply.calls, at, offer, turn_end)
                .await;
        }

        // L2: the turn's calls would cross the limit on calls: none runs, each is answered so
        // that the transcript stays whole, and the run ends.
        if let Some(limit) = self.state.options.usage_limits().before_calls(
            self.state.calls_made + self.state.nested.calls,
            reply.calls.len() as u64,
        ) {
            let calls = reply.calls.clone();
            self.state
                .transcript
                .push(Message::assistant_with_calls(reply.text, reply.calls));
            self.env.sink.emit(turn_end);
            return Err(self.refuse_calls(turn, &limit, &calls, None));
        }
        let batch = Batch::turn(&reply.calls);
        let (records, end) = self.run_calls(batch, offer, turn, &repaired).await;
        // Q1: what the local search returned is advertised from the next request on.
        self.load(offer, &catalog::found_by(&records));
        // The assistant's message takes the calls, which ran from the reply; room for it and
        // the calls' results is made once.
        self.state.transcript.reserve(1 + reply.calls.len());
        self.state
            .transcript
            .push(Message::assistant_with_calls(reply.text, reply.calls));
        // H2: the calls that needed no decision ran; the run pauses with the others. Only an
        // agent holding a tool that can pause looks.
        if self.pauses_after(&records, end) {
            self.env.sink.emit(turn_end);
            return Err(self.pause(&offer.available, records, None));
        }
        let answered = self.answer(records, end);
        self.env.sink.emit(turn_end);
        answered
    }

    /// The calls of `batch`, through the run's effects (U2), each to its tool when the run
    /// advertised it (A5, A8); every call's outcome is shown to the agent's observer (K1),
    /// a repaired call's record with what the model sent (Q4).
    async fn run_calls(
        &mut self,
        batch: Batch<'_>,
        offer: &Offer<'_>,
        turn: usize,
        repaired: &[(usize, String)],
    ) -> (Vec<CallRecord>, CallsEnd) {
        let targets = targets(self.env.shared, batch.calls(), &offer.visible);
        let resumed = batch.approved.is_some();
        let allowed = std::mem::take(&mut self.state.allowed);
        let batch = batch.with_allowed(&allowed);
        if let Some(nest) = self.env.nest {
            nest.start_batch(&self.state);
        }
        let (mut records, end) = self
            .env
            .effects
            .calls(self.env, batch, &targets, turn, &offer.slots)
            .await;
        self.state.allowed = allowed;
        if let Some(nest) = self.env.nest {
            self.gather_nested(nest, &mut records);
        }
        if let Some(parent) = self.env.parent.filter(|_| !resumed) {
            parent.report(NestedUsage {
                calls: records.len() as u64,
                ..NestedUsage::default()
            });
        }
        repair::mark(&mut records, repaired);
        self.env.shared.observe(&records);
        (records, end)
    }

    /// Loads the deferred tools among `names` that the run offers (Q1), and renders the
    /// offer again when that added any.
    fn load(&mut self, offer: &mut Offer<'a>, names: &[String]) {
        let shared = self.env.shared;
        let Some(catalog) = &shared.catalog else {
            return;
        };
        let names = names.iter().map(String::as_str);
        if catalog.load(&shared.set, &offer.available, names, &mut self.state.loaded) {
            offer.reload(shared, &self.state.loaded);
        }
    }

    /// `error`, with the transcript, calls and usage so far.
    fn fail(&mut self, error: RunError) -> RunError {
        error.with_run(
            std::mem::take(&mut self.state.transcript),
            std::mem::take(&mut self.calls),
            std::mem::take(&mut self.state.usage),
        )
    }
}
