//! An agent: a model with instructions and tools, ready to run ([`Agent`], built by
//! [`AgentBuilder`]); its runs ([`RunRequest`], [`RunOptions`], limits in [`UsageLimits`]), what
//! a run gives back ([`RunOutput`], [`CallRecord`]) or yields as it goes ([`RunEvent`]), why it
//! ends without an answer ([`RunError`]), and a run paused for approval or deferred results
//! ([`PausedRun`], [`PendingCall`]) with the [`Decisions`] that resume it.

// Its parts, one module each:
// - `builder`: [`AgentBuilder`], every declaration checked at `build()`.
// - `shared`: what every run of one agent shares (the model, the tools, their specs, the
//   limits).
// - `run_loop`: a run, turn by turn: discovery, the model request, the end of a run.
// - `reply`: one model reply, read from its stream of deltas into text and tool calls.
// - `calls`: the tool calls of one turn, run concurrently, each to its outcome.
// - `catalog`: deferred tools, loaded by a search (Q1), and the local search tool.
// - `spans`: the run's spans, as the OpenTelemetry GenAI semantic conventions name them (K2).
// - `progress`: the progress a call's handler reports, as stream events (K3).
// - `event`: a run as a stream ([`RunEvent`], [`RunStream`]).
// - `output`: what a run gives back ([`RunOutput`], [`CallRecord`]).
// - `pause`: a run paused for approval or for deferred results ([`PausedRun`],
//   [`PendingCall`]), the [`Decisions`] that resume it, and [`ResumeError`].
// - `compose`: an agent as a tool of another ([`AgentTool`], B1, B2).
// - `error`: why an agent cannot be built ([`BuildError`]) or a run ended without an answer
//   ([`RunError`]).

mod batch;
mod builder;
mod calls;
mod cancel;
pub(crate) mod catalog;
mod compose;
mod discovery;
mod effects;
mod env;
mod error;
mod event;
mod handle;
mod journal;
mod options;
mod output;
mod pause;
mod progress;
mod repair;
mod reply;
mod request;
mod run_loop;
mod sampling;
mod shared;
mod spans;
mod state;
pub(crate) mod toolset;
#[cfg(feature = "mcp")]
pub(crate) use state::new_id;
mod typed;

use std::sync::Arc;

use tool_core::{Context, Tool};

use crate::model::{Input, ToolSpec};
use event::Sink;

pub use builder::{AgentBuilder, DEFAULT_MAX_CONCURRENCY, DEFAULT_MAX_TURNS, DEFAULT_RETRIES};
pub use catalog::SEARCH_TOOL;
pub use compose::{AgentRequest, AgentTool, SubAgentError};
pub use error::{BuildError, BuildProblem, RunError};
pub use event::{RunEvent, RunStream};
pub use handle::Agent;
pub use journal::{
    CallBatch, CallResults, CallStep, Journal, JournalError, MemoryJournal, Retry, Step, StepKind,
};
pub use options::{RunOptions, UsageLimits};
pub use output::{CallRecord, RunOutput};
pub use pause::{
    BoxFuture, Decision, Decisions, MemoryLedger, PauseLedger, PausedRun, PendingAt, PendingCall,
    PendingKind, ResumeError, ResumeOptions,
};
pub use repair::{LenientJson, RepairArguments};
pub use request::{Answer, RunRequest};
pub use typed::Typed;

impl Agent {
    /// Runs a conversation to its final answer.
    ///
    /// 1. Discovery (A2): every policy is evaluated once, in declaration order, before any
    ///    model I/O; the tools found available are advertised for the whole run (A8).
    /// 2. Each turn is one model request. The calls it asks for run concurrently, at most
    ///    `max_concurrency` at once (R2), each through [`Tool::invoke_with`] on its own call
    ///    context (availability re-check, validation, handler: A4, R5); their results go back
    ///    in the model's call order.
    /// 3. The run ends at a reply without tool calls (the final answer), or with an error.
    ///
    /// A call that needs approval (H1) or of a deferred tool (H5) does not run: the turn's
    /// other calls run as usual, then the run pauses (H2), returning a [`RunError`] of kind
    /// `Paused` whose [`RunError::into_paused`] is the [`PausedRun`]: plain data to keep
    /// (serialize it) and resume with [`Agent::resume`], here or in another process.
    ///
    /// The agent's hooks ([`AgentBuilder::hook`], K1) run around each call's handler: a hook
    /// may deny a call (the model reads its message) or end the run (kind `Hook`, permanent),
    /// and may replace the text the model reads of an outcome.
    ///
    /// A name the agent does not hold gets `tool unavailable` without running anything (A5).
    /// A tool the agent holds but did not advertise (hidden at discovery) still goes through
    /// [`Tool::invoke_with`]: its policy's re-check decides, so guessing the name never
    /// bypasses the policy; if the policy allows it by then, the call runs, although the tool
    /// is advertised only from the next run on (A8).
    ///
    /// # Errors
    ///
    /// A [`RunError`] of kind:
    /// - `Availability` (a policy failed at discovery, A3: no model request is made; or at a
    ///   call, A6, also permanent), `Panic` (a policy or handler panicked, E4), `Permanent`
    ///   (a handler returned [`tool_core::Permanent`], P1), `Hook` (a hook ended the run, K1;
    ///   a panicking hook is `Panic`). A call's fatal failure cancels its sibling calls and
    ///   waits for them all; the first failure is returned (P2, P3).
    /// - `Cancelled`: the caller's context was cancelled (P4).
    /// - `MaxTurns`: the run needed more than `max_turns` requests (R3).
    /// - `Model` or `Protocol`: the model failed, or sent a reply that cannot be a turn
    ///   (two calls with one id, say), or the input transcript is not well formed.
    /// - `Paused`: not a failure; calls wait for a decision or a result (H2, H5).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the run: the model request in flight and the calls in
    /// flight are dropped at their current await points. To stop a run and let handlers see
    /// it, cancel `ctx` instead (P4): each call's context is cancelled, the run drops what is
    /// still in flight and returns kind `Cancelled`.
    pub async fn run(&self, ctx: &Context, input: impl Into<Input>) -> Result<RunOutput, RunError> {
        self.execute(ctx, RunRequest::new(input)).await
    }

    /// Runs `request` to its end: a new run or a resumed one, with its options, its typed
    /// answer and its journal as the request says ([`RunRequest`]). [`Agent::run`] and
    /// [`Agent::resume`] are this with a request of their input and nothing else.
    ///
    /// A typed answer ([`RunRequest::typed`], O2) must be a JSON object that fits `T`'s
    /// schema. A model with native structured output ([`Model::native_answers`](crate::Model::native_answers): OpenAI's
    /// `response_format` / `text.format`, the offline model) gets the schema with each
    /// request and answers in it; any other gets a `final_answer` tool whose arguments are
    /// the answer, and must call a tool each turn. The answer is parsed by `T`'s own parser
    /// (S2); one that does not fit goes back to the model with its violations, under the retry
    /// budget ([`AgentBuilder::retries`], L1). A paused run that wants a typed answer is
    /// resumed with a request typed the same (the same schema, H7); its answer's failures in
    /// a row count on from the pause.
    ///
    /// A durable run ([`RunRequest::journal`], W1) takes each step (discovery, each model
    /// request, each tool call) through its journal, which records its result and, when the
    /// run is taken again from the same journal after its process died, answers it without
    /// running it. The run's id is the journal's ([`Journal::run_id`]), so each call's
    /// idempotency key ([`tool_core::Context::idempotency_key`], W2) is the same on every
    /// attempt. The calls of a turn run one at a time, in the model's order. A paused durable
    /// run is resumed on the same journal. See [`crate::journal`].
    ///
    /// # Errors
    ///
    /// As [`Agent::run`] and [`Agent::resume`]; also:
    /// - `UsageLimit` when a limit would be crossed (L2; the error keeps the usage so far);
    /// - `RetriesExhausted` when a tool fails more calls in a row than its retry budget, or a
    ///   typed answer did not fit more times in a row than the budget allows (L1; the error
    ///   names the tool and keeps the last violations);
    /// - `Declaration` when a typed answer's schema has no object root, or the request's
    ///   options do not fit its start ([`RunRequest::options`] on a resume);
    /// - `Resume` with [`ResumeError::AnswerMismatch`] when a resumed run wants another typed
    ///   answer than the request's (or none);
    /// - `Journal` when the journal cannot give a step's result.
    ///
    /// # Cancel safety
    ///
    /// As [`Agent::run`].
    pub async fn execute<O: Answer>(
        &self,
        ctx: &Context,
        request: RunRequest<'_, O>,
    ) -> Result<O, RunError> {
        let journal = request.journal_ref();
        let sink = Sink::none().observed(request.observer());
        let start = request.into_start(&*self.shared.model)?;
        let span = spans::run(&self.shared);
        let shared = Arc::clone(&self.shared);
        let output = run_loop::run(shared, ctx.clone(), start, sink, span, journal).await?;
        O::read(output)
    }

    /// Runs `request` as a stream of [`crate::RunEvent`]s (R4), as [`Agent::run_stream`]
    /// does: text deltas, tool calls as requested, each call's outcome, turn ends with usage,
    /// and the final output (or the run's error) last. A resumed run's stream starts with
    /// [`RunEvent::Started`], then each decided call's [`RunEvent::CallFinished`]. A typed
    /// answer is checked as [`Agent::execute`] checks it; the stream's output holds it as the
    /// answer's JSON text. The journal of a streamed durable run lives as long as the stream
    /// may (`'static`).
    ///
    /// The run starts when the stream is first polled; a request whose options do not fit
    /// it, or whose answer cannot be asked of this agent's model, ends the stream at once
    /// with that error.
    pub fn execute_stream<O: Answer>(
        &self,
        ctx: &Context,
        request: RunRequest<'static, O>,
    ) -> RunStream {
        let shared = Arc::clone(&self.shared);
        let ctx = ctx.clone();
        let span = spans::run(&self.shared);
        let journal = request.journal_ref();
        let observer = request.observer();
        let start = request.into_start(&*self.shared.model);
        RunStream::new(move |sink| async move {
            let sink = sink.observed(observer);
            run_loop::run(shared, ctx, start?, sink, span, journal).await
        })
    }

    /// Resumes a paused run with one decision per pending call (H3, H4, H5), in this process
    /// or another whose agent holds the same tools.
    ///
    /// Before anything runs, the paused run is checked ([`Agent::verify`]: its format, its
    /// seal, each advertised tool held with the same schema) and the decisions against its
    /// pending calls; with a ledger ([`AgentBuilder::ledger`]) its pause is consumed, so that
    /// it resumes once (H9). Then the paused turn is finished: an approved call goes through
    /// [`Tool::invoke_approved`] on a fresh call context (its availability re-checked and
    /// its arguments validated again, so a principal who lost the right meanwhile gets
    /// `tool unavailable`; the approval predicate is not asked again), a denied one answers
    /// the denial's message, a deferred one its result (E1, E2); the results go to the model
    /// in the model's order with those of the calls that ran before the pause.
    ///
    /// The run goes on as if it had never paused (H7): with the options it was started with
    /// (its usage limits counting what it used before the pause, the tools it stops at, its
    /// tool choice already spent), each tool's failures in a row, the tools it advertised
    /// when it started (A8), to an answer, another pause, or an error. A run that wants a
    /// typed answer is resumed with a typed [`RunRequest`] ([`Agent::execute`]).
    ///
    /// `ctx` is the resuming caller's: the paused run holds no context.
    ///
    /// # Errors
    ///
    /// A [`RunError`] of kind `Resume` ([`RunError::resume_error`]) when the paused run or
    /// the decisions are refused, or the pause was resumed before; nothing ran. Otherwise as
    /// [`Agent::run`].
    ///
    /// # Cancel safety
    ///
    /// As [`Agent::run`].
    pub async fn resume(
        &self,
        ctx: &Context,
        paused: PausedRun,
        decisions: Decisions,
    ) -> Result<RunOutput, RunError> {
        self.execute(ctx, RunRequest::resume(paused, decisions))
            .await
    }

    /// Checks a paused run against this agent without resuming it (H3): its format, its seal
    /// (and key, [`AgentBuilder::state_key`]), each tool it advertised held with the same
    /// schema, and that its parts fit together. Use it before showing a paused run read from
    /// a file to whoever decides.
    ///
    /// # Errors
    ///
    /// The [`ResumeError`] that [`Agent::resume`] would refuse it with.
    pub fn verify(&self, paused: &PausedRun) -> Result<(), ResumeError> {
        paused
            .verify(
                &self.shared.set.tools,
                &self.shared.set.by_name,
                self.shared.set.state_key.as_deref(),
            )
            .map(|_| ())
    }

    /// Runs a conversation as a stream of [`crate::RunEvent`]s (R4): the same engine as
    /// [`Agent::run`], with text deltas, tool calls as requested, each call's outcome, turn
    /// ends with usage, and the final output (or the run's error) last.
    ///
    /// The run starts when the stream is first polled. See [`RunStream`].
    pub fn run_stream(&self, ctx: &Context, input: impl Into<Input>) -> RunStream {
        self.execute_stream(ctx, RunRequest::new(input))
    }

    /// The tools a run in `ctx` would advertise: discovery alone, with no model I/O, no
    /// argument parsing and no handler (A7). Each policy is evaluated once, in declaration
    /// order.
    ///
    /// # Errors
    ///
    /// Returns kind `Availability` when a policy fails (the cause kept), `Panic` when one
    /// panics, and `Cancelled` when `ctx` is cancelled.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the policy check in progress.
    pub async fn advertised(&self, ctx: &Context) -> Result<Vec<ToolSpec>, RunError> {
        let visible = discovery::discover(&self.shared, ctx).await?;
        Ok(self
            .shared
            .specs
            .iter()
            .zip(visible)
            .filter(|(_, shown)| *shown)
            .map(|(spec, _)| spec.clone())
            .collect())
    }

    /// The tools the agent holds, in declaration order.
    pub fn tools(&self) -> &[Tool] {
        &self.shared.set.tools
    }

    /// Every tool's spec as the model's driver rendered it at `build()`, in declaration order.
    pub fn tool_specs(&self) -> &[ToolSpec] {
        &self.shared.specs
    }

    /// The options every run follows unless it is given its own ([`AgentBuilder::options`]).
    pub fn options(&self) -> &RunOptions {
        &self.shared.options
    }

    /// The agent's name ([`AgentBuilder::name`]), if it has one.
    pub fn name(&self) -> Option<&str> {
        self.shared.name.as_deref()
    }

    /// The instructions sent with every request.
    pub fn instructions(&self) -> Option<&str> {
        self.shared.instructions.as_deref()
    }

    /// How many calls of one turn may run at once.
    pub fn max_concurrency(&self) -> usize {
        self.shared.max_concurrency
    }

    /// How many model requests a run may make.
    pub fn max_turns(&self) -> usize {
        self.shared.max_turns
    }
}
