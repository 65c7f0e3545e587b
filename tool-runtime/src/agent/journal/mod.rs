//! Durable runs (W1): the [`Journal`] a run records each of its steps in, so that a run cut
//! short at any point (its process killed) and started again from the journal replays what
//! it already did instead of doing it again.
//!
//! A run given a journal ([`crate::RunRequest::journal`]) takes these steps, in this order,
//! each through [`Journal::step`]:
//!
//! - discovery (A2): the names of the tools the run advertises, once per run;
//! - each model request (R1): the whole reply, its stream consumed inside the step;
//! - each tool call (local or remote), one step per call in the model's order, keyed by its
//!   call id: the availability re-check, validation, the approval predicate, the hooks and
//!   the handler all run inside it, and the step's result is the call's [`Outcome`] in its
//!   recorded form (W4: the model-facing text, violations, a pending call's validated
//!   arguments; of an error its kind only).
//!
//! Everything else a run decides follows from those results and the run's options, so a
//! replay decides it again the same way. The calls of one turn run one at a time in a durable
//! run, the journal's order the model's order, unless the journal takes them concurrently
//! ([`Journal::parallel_calls`], W9): each call a step of its own, started in the model's
//! order, at most `max_concurrency` in flight.
//!
//! [`MemoryJournal`] keeps the steps in memory, for tests and for seeing what a run journals;
//! the `tool-durable` crate journals them in Restate.

mod memory;

use std::fmt;

use serde_json::Value;
use tool_core::Outcome;

pub(crate) use super::pause::BoxFuture;
pub use memory::MemoryJournal;

/// Where a durable run records its steps (W1) and replays them from.
///
/// An implementation runs a step's future at most until its result is recorded, and from
/// then on answers the same step (the same position in the run) with the recorded result
/// without running it. It may run a step again when its process died before the result was
/// recorded: a tool call then runs again with the same idempotency key
/// ([`tool_core::Context::idempotency_key`], W2).
pub trait Journal: Send + Sync {
    /// The run's id: every context of the run carries it (H9, W2), the same on every replay.
    fn run_id(&self) -> &str;

    /// Runs `step`, or answers the result recorded for it, as JSON.
    ///
    /// A step whose future asks to be retried ([`Retry`]) is not recorded: the journal takes
    /// the run again later from its recorded steps (Restate retries the invocation, under its
    /// retry policy, and parks it when the policy says so, W5), or answers a
    /// [`JournalError`]. So does a journal that cannot record a result, or whose recorded
    /// step is not this one; the run then ends with kind `Journal`.
    fn step<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Result<Value, JournalError>>;

    /// Whether this journal takes a turn's calls concurrently, each a step of its own that
    /// runs apart from the run ([`Journal::calls`], W9). When it does not (the default), each
    /// call is a [`Journal::step`] and the calls run one at a time in the model's order.
    fn parallel_calls(&self) -> bool {
        false
    }

    /// Takes the calls of `batch` concurrently, each a step of its own whose work
    /// [`CallStep::run`] does wherever the journal runs it (W9): the steps start in the
    /// batch's order, at most [`CallBatch::limit`] in flight; as each ends, the journal tells
    /// [`CallBatch::ended`], and starts no further call once it answers `false`. The answer
    /// holds each call's recorded result in the batch's order, `None` for a call not started;
    /// an error when the engine cancelled the run.
    ///
    /// The default, for a journal whose [`Journal::parallel_calls`] is `false`, answers an
    /// error without running anything.
    fn calls<'a>(
        &'a self,
        batch: CallBatch<'a>,
    ) -> BoxFuture<'a, Result<CallResults, JournalError>> {
        let step = batch
            .calls()
            .first()
            .map_or_else(|| "calls".to_owned(), |call| call.kind().to_string());
        Box::pin(std::future::ready(Err(JournalError::new(
            step,
            "this journal takes a turn's calls one at a time",
        ))))
    }
}

/// What [`Journal::calls`] answers: each call's recorded result in the batch's order, `None`
/// for a call the journal did not start.
pub type CallResults = Vec<Option<Result<Value, JournalError>>>;

/// A tool call of a durable run as plain data (W9): what running it as a step of its own,
/// apart from the run (another invocation, another process), takes. [`CallStep::run`] runs it
/// through the same pipeline as a call of the run (availability re-check, validation, the
/// approval predicate, hooks, handler) and answers its outcome in its recorded form (W4).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CallStep {
    pub(crate) id: String,
    pub(crate) tool: String,
    pub(crate) arguments: String,
    pub(crate) turn: usize,
    pub(crate) position: usize,
    /// Whether the call runs approved (H4, at a resume).
    pub(crate) approved: bool,
    /// Whether the run advertised the tool the call names (A5): when not, the call is answered
    /// as unavailable without being looked up.
    pub(crate) callable: bool,
}

impl CallStep {
    /// The step's kind: `call {id} {tool}`.
    pub fn kind(&self) -> StepKind {
        StepKind::Call {
            id: self.id.clone(),
            tool: self.tool.clone(),
        }
    }

    /// The call id the model gave.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The turn the call belongs to, from 1.
    pub fn turn(&self) -> usize {
        self.turn
    }

    /// The call's position in its turn, from 0.
    pub fn position(&self) -> usize {
        self.position
    }
}

/// The calls of one turn that a journal takes concurrently ([`Journal::calls`], W9).
pub struct CallBatch<'a> {
    pub(crate) calls: Vec<CallStep>,
    pub(crate) limit: usize,
    pub(crate) ended: &'a (dyn Fn(usize, &Value) -> bool + Send + Sync),
}

impl CallBatch<'_> {
    /// The calls, in the model's order: the order in which their steps start.
    pub fn calls(&self) -> &[CallStep] {
        &self.calls
    }

    /// The most calls in flight at once: the agent's `max_concurrency` (R2), or 1 for a batch
    /// of one sequential call (L4); at least 1.
    pub fn limit(&self) -> usize {
        self.limit.max(1)
    }

    /// Call `index` (in [`CallBatch::calls`]) ended with the recorded result `value`: whether
    /// further calls may start (`false` after a fatal outcome, P2, or once the run was
    /// cancelled).
    pub fn ended(&self, index: usize, value: &Value) -> bool {
        (self.ended)(index, value)
    }
}

impl fmt::Debug for CallBatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallBatch")
            .field("calls", &self.calls)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

/// What a step of a durable run is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StepKind {
    /// Discovery: which tools the run advertises (A2).
    Discovery,
    /// The model request of a turn, from 1.
    Request {
        /// The turn.
        turn: usize,
    },
    /// A tool call.
    Call {
        /// The call id the model gave.
        id: String,
        /// The tool the call names.
        tool: String,
    },
    /// A step of a sub-agent's run (B2), taken in its parent's journal under the call that
    /// started the sub-agent's run; the call's own step, its outcome, follows its steps.
    Nested {
        /// The id of the call that started the sub-agent's run.
        id: String,
        /// The sub-agent's tool, as the call names it.
        tool: String,
        /// The sub-agent run's own step.
        inner: Box<StepKind>,
    },
}

impl fmt::Display for StepKind {
    /// The step's name in a journal: `discovery`, `request 2`, `call c1 restart`, and a
    /// sub-agent's `call c2 triage > request 1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepKind::Discovery => f.write_str("discovery"),
            StepKind::Request { turn } => write!(f, "request {turn}"),
            StepKind::Call { id, tool } => write!(f, "call {id} {tool}"),
            StepKind::Nested { id, tool, inner } => write!(f, "call {id} {tool} > {inner}"),
        }
    }
}

/// One step of a durable run: what it is, and the future that takes it.
pub struct Step<'a> {
    kind: StepKind,
    run: BoxFuture<'a, Result<Value, Retry>>,
}

impl<'a> Step<'a> {
    pub(crate) fn new(kind: StepKind, run: BoxFuture<'a, Result<Value, Retry>>) -> Self {
        Self { kind, run }
    }

    /// What the step is.
    pub fn kind(&self) -> &StepKind {
        &self.kind
    }

    /// The step's work: its result as JSON, or a failure that may pass on a later attempt.
    pub fn into_future(self) -> BoxFuture<'a, Result<Value, Retry>> {
        self.run
    }
}

impl fmt::Debug for Step<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Step")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// A step that failed in a way a later attempt may not (the model provider unreachable,
/// overloaded or slow): the journal runs it again under its retry policy instead of
/// recording the failure. Its message is for the operator's log and the engine's status,
/// never for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Retry {
    message: String,
}

impl Retry {
    /// A failure to retry, saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// A journal could not give a step's result: the engine gave up retrying it, refused it, or
/// its recorded result does not read back as the step's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the journal failed at step `{step}`: {reason}")]
pub struct JournalError {
    step: String,
    reason: String,
    cancelled: bool,
}

impl JournalError {
    /// The journal failed at `step` (its [`StepKind`] display) for `reason`.
    pub fn new(step: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            step: step.into(),
            reason: reason.into(),
            cancelled: false,
        }
    }

    /// The engine cancelled the run at `step` (an operator's cancel): the run ends with kind
    /// `Cancelled`, not retried.
    pub fn cancelled(step: impl Into<String>) -> Self {
        Self {
            step: step.into(),
            reason: "the run was cancelled".to_owned(),
            cancelled: true,
        }
    }

    /// Whether the engine cancelled the run.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }

    /// The step's name.
    pub fn step(&self) -> &str {
        &self.step
    }

    /// Why it failed.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// A call's outcome as a step's result (its recorded form, W4).
pub(crate) fn outcome_value(outcome: &Outcome, kind: &StepKind) -> Result<Value, Retry> {
    serde_json::to_value(outcome)
        .map_err(|e| Retry::new(format!("step `{kind}`: the outcome did not serialize: {e}")))
}
