//! The errors of an agent: [`BuildError`] (declaration problems, found by `build()`) and
//! [`RunError`] (why a run ended without an answer). A reply or a transcript that cannot be a
//! conversation is a [`ProtocolError`], from the model interface.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;

use tool_core::{BoxError, DeclarationError, Error, ErrorKind, Site, Violation};

use super::output::CallRecord;
use super::pause::{PausedRun, ResumeError};
use crate::model::{Message, ModelError, ProtocolError, SchemaUnsupported, Usage, preview};

/// Every problem that keeps an agent from being built, found before any model I/O (D2, N3,
/// V1). It is of kind [`ErrorKind::Declaration`], and converts into [`tool_core::Error`] and
/// [`RunError`] of that kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    problems: Vec<BuildProblem>,
}

impl BuildError {
    pub(crate) fn new(problems: Vec<BuildProblem>) -> Self {
        Self { problems }
    }

    /// Every problem found, in the order of the declarations.
    pub fn problems(&self) -> &[BuildProblem] {
        &self.problems
    }

    /// Always [`ErrorKind::Declaration`].
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::Declaration
    }

    /// Whether this error is of `kind`: `Declaration`, and `Permanent` (a declaration problem
    /// cannot go away by retrying).
    pub fn is(&self, kind: ErrorKind) -> bool {
        matches!(kind, ErrorKind::Declaration | ErrorKind::Permanent)
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.as_slice() {
            [one] => write!(f, "the agent cannot be built: {one}"),
            all => {
                write!(f, "the agent cannot be built: {} problems", all.len())?;
                for problem in all {
                    write!(f, "\n  - {problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl StdError for BuildError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.problems
            .first()
            .map(|p| p as &(dyn StdError + 'static))
    }
}

impl IntoIterator for BuildError {
    type Item = BuildProblem;
    type IntoIter = std::vec::IntoIter<BuildProblem>;

    fn into_iter(self) -> Self::IntoIter {
        self.problems.into_iter()
    }
}

impl From<BuildError> for Error {
    fn from(e: BuildError) -> Self {
        Error::with_source(ErrorKind::Declaration, "the agent is declared wrong", e)
    }
}

/// One problem found by [`crate::AgentBuilder::build`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildProblem {
    /// A tool is declared wrong (D2), or two tools share a name (N3, naming both sites).
    #[error(transparent)]
    Tool(#[from] DeclarationError),
    /// The model's driver cannot express a tool's schema (V1).
    #[error("the model cannot take the schema of tool `{name}` (declared at {site}): {source}")]
    SchemaUnsupported {
        /// The tool's name.
        name: String,
        /// Where the tool was declared.
        site: Site,
        /// What the driver said.
        source: SchemaUnsupported,
    },
    /// A per-tool timeout names a tool the agent does not hold.
    #[error("a timeout is set for `{name}`, but the agent holds no tool of that name")]
    TimeoutForUnknownTool {
        /// The name given.
        name: String,
    },
    /// `max_concurrency(0)`: no call could ever run.
    #[error("max_concurrency must be at least 1")]
    ZeroConcurrency,
    /// `max_turns(0)`: no request could ever be made.
    #[error("max_turns must be at least 1")]
    ZeroTurns,
    /// An MCP server was given a deferred tool (H5), which has no handler to answer a call
    /// with.
    #[error(
        "tool `{name}` (declared at {site}) is deferred: an MCP server answers each call when \
         it is made, and this tool has no handler here; serve a tool with a handler instead"
    )]
    DeferredOverMcp {
        /// The tool's name.
        name: String,
        /// Where the tool was declared.
        site: Site,
    },
    /// An MCP server's resource, resource template or prompt is declared wrong (M7).
    #[cfg(feature = "mcp")]
    #[error(transparent)]
    McpCatalog(#[from] crate::mcp::CatalogProblem),
    /// `state_key` was given an empty key, which would seal nothing.
    #[error("the state key is empty: give a secret of at least 16 bytes, or none")]
    EmptyStateKey,
    /// An MCP server would publish a tool under a name MCP does not allow (M2).
    #[error(
        "tool `{declared}` would be published over MCP as `{published}`, which cannot be an MCP tool name: {reason}; give it another name with `McpNaming::map`"
    )]
    McpName {
        /// The tool's declared name.
        declared: String,
        /// The name it would be published under.
        published: String,
        /// Why that name is refused.
        reason: &'static str,
    },
    /// Two tools of an MCP server would be published under one name (M2: names are one to
    /// one).
    #[error(
        "tools `{first}` and `{second}` would both be published over MCP as `{published}`: give one of them another name with `McpNaming::map`"
    )]
    McpNameTaken {
        /// The name both would have.
        published: String,
        /// The first tool's declared name.
        first: String,
        /// The second tool's declared name.
        second: String,
    },
    /// An MCP naming names a tool the server does not hold (M2).
    #[error("an MCP name is given for `{declared}`, but the server holds no tool of that name")]
    McpNameForUnknownTool {
        /// The declared name the naming gives.
        declared: String,
    },
    /// A task support is given for a tool the server does not hold (M5).
    #[error("a task support is given for `{declared}`, but the server holds no tool of that name")]
    TaskSupportForUnknownTool {
        /// The declared name given.
        declared: String,
    },
    /// A tool is declared to ask its questions before its task, but it runs as no task (M9).
    #[error(
        "`{declared}` is declared to ask its questions before its task, but it runs as no \
         task: give it a task support (`task_support`, `Optional` or `Required`) as well"
    )]
    QuestionsBeforeTaskWithoutTasks {
        /// The declared name given.
        declared: String,
    },
}

/// Why a run ended without a final answer: a failure, or a pause.
///
/// A run whose calls wait for approval or for their results (H2, H5) ends with kind
/// [`ErrorKind::Paused`]: not a failure, but not an answer either, so that a caller that does
/// not expect a pause cannot take it for one. [`RunError::into_paused`] gives the
/// [`PausedRun`] to keep and resume; [`RunError::calls`] keeps the records of the calls made
/// (E3), which the paused run does not hold.
///
/// Match on [`RunError::kind`], or ask [`RunError::is`], which follows
/// [`tool_core::Error::is`]: a policy failure during a call is of kind `Availability` and also
/// `Permanent` (A6); a panic is of kind `Panic` and permanent (E4). The cause chain
/// (`source()`) holds the unredacted failure (E3); the error also keeps the call that caused
/// it, if any, the transcript so far (well formed: every call of the last turn has a result)
/// and the record of every call made.
pub struct RunError {
    inner: Box<Inner>,
}

struct Inner {
    /// The kind, the message and the cause chain, shown and walked as a [`tool_core::Error`]
    /// shows and walks its own.
    error: Error,
    /// Whether the failure is permanent: decided here, by the run, and not by `error`, which
    /// would also call a cause chain holding [`tool_core::Permanent`] permanent.
    permanent: bool,
    /// Whether `error`'s message already shows its direct cause (a model failure): the
    /// chain (`source()`, `{:#}`) then starts below that cause, so nothing shows twice.
    shows_cause: bool,
    tool: Option<String>,
    call_id: Option<String>,
    transcript: Vec<Message>,
    calls: Vec<CallRecord>,
    usage: Vec<Usage>,
    /// The text of a final reply that was cut off (kind `Truncated`).
    partial_text: Option<String>,
    /// The last violations of the tool whose retry budget ran out (kind `RetriesExhausted`).
    violations: Vec<Violation>,
    /// The paused run (kind `Paused`); it holds the transcript and the usage.
    paused: Option<Box<PausedRun>>,
}

impl RunError {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<Cow<'static, str>>) -> Self {
        Self::from_error(Error::new(kind, message))
    }

    /// A failure that says `message`, caused by `source`, of `kind` as
    /// [`Error::with_source`] settles it.
    pub(crate) fn with_source(
        kind: ErrorKind,
        message: impl Into<Cow<'static, str>>,
        source: impl Into<BoxError>,
    ) -> Self {
        Self::from_error(Error::with_source(kind, message, source))
    }

    /// A failure that is permanent when its kind is `Permanent` or `Panic`.
    fn from_error(error: Error) -> Self {
        let permanent = matches!(error.kind(), ErrorKind::Permanent | ErrorKind::Panic);
        Self {
            inner: Box::new(Inner {
                error,
                permanent,
                shows_cause: false,
                tool: None,
                call_id: None,
                transcript: Vec::new(),
                calls: Vec::new(),
                usage: Vec::new(),
                partial_text: None,
                violations: Vec::new(),
                paused: None,
            }),
        }
    }

    /// A run that paused (H2, H5), with the records of the calls this process made (E3).
    pub(crate) fn pause(paused: PausedRun, calls: Vec<CallRecord>) -> Self {
        let pending = paused.pending().len();
        let mut e = Self::new(
            ErrorKind::Paused,
            format!("the run paused: {pending} call(s) await a decision or a result"),
        );
        e.inner.calls = calls;
        e.inner.paused = Some(Box::new(paused));
        e
    }

    /// The failure of a call that ends the run (P1, A6, E4): of the call error's kind.
    pub(crate) fn from_call(error: Error, tool: &str, call_id: &str) -> Self {
        let message = format!(
            "tool `{}` (call {}) ended the run: {}",
            preview(tool),
            preview(call_id),
            error.message()
        );
        let permanent = error.is_permanent();
        let mut e = Self::with_source(error.kind(), message, error)
            .with_tool(tool)
            .with_permanent(permanent);
        e.inner.call_id = Some(call_id.to_owned());
        e
    }

    pub(crate) fn with_tool(mut self, tool: &str) -> Self {
        self.inner.tool = Some(tool.to_owned());
        self
    }

    pub(crate) fn with_permanent(mut self, permanent: bool) -> Self {
        self.inner.permanent = permanent;
        self
    }

    /// The same failure, naming the call `call_id` and keeping its `violations`.
    pub(crate) fn with_call(mut self, call_id: &str, violations: Vec<Violation>) -> Self {
        self.inner.call_id = Some(call_id.to_owned());
        self.inner.violations = violations;
        self
    }

    /// The same failure, keeping `violations` (of an answer that no call gave, O2).
    pub(crate) fn with_violations(mut self, violations: Vec<Violation>) -> Self {
        self.inner.violations = violations;
        self
    }

    pub(crate) fn with_partial_text(mut self, text: String) -> Self {
        self.inner.partial_text = Some(text);
        self
    }

    pub(crate) fn with_run(
        mut self,
        transcript: Vec<Message>,
        calls: Vec<CallRecord>,
        usage: Vec<Usage>,
    ) -> Self {
        self.inner.transcript = transcript;
        self.inner.calls = calls;
        self.inner.usage = usage;
        self
    }

    /// What kind of failure ended the run.
    pub fn kind(&self) -> ErrorKind {
        self.inner.error.kind()
    }

    /// Whether this error is of `kind`, or permanent when `kind` is `Permanent`.
    pub fn is(&self, kind: ErrorKind) -> bool {
        self.kind() == kind || (kind == ErrorKind::Permanent && self.inner.permanent)
    }

    /// Whether the failure is permanent (P1, A6, E4).
    pub fn is_permanent(&self) -> bool {
        self.inner.permanent
    }

    /// What happened, for the application.
    pub fn message(&self) -> &str {
        self.inner.error.message()
    }

    /// The name of the tool whose call (or policy, at discovery) ended the run.
    pub fn tool(&self) -> Option<&str> {
        self.inner.tool.as_deref()
    }

    /// The text of a final reply cut off at the model's output token limit (kind
    /// [`ErrorKind::Truncated`]): what the model wrote before it was cut.
    pub fn partial_text(&self) -> Option<&str> {
        self.inner.partial_text.as_deref()
    }

    /// The violations of the last failed call of the tool whose retry budget ran out (kind
    /// `RetriesExhausted`, L1); empty otherwise (and when that call asked to try again with
    /// a [`ToolError::retry`](tool_core::ToolError::retry) rather than breaking the schema).
    pub fn violations(&self) -> &[Violation] {
        &self.inner.violations
    }

    /// The id of the call that ended the run.
    pub fn call_id(&self) -> Option<&str> {
        self.inner.call_id.as_deref()
    }

    /// The call failure that ended the run (P3: the initiating one), unredacted (E3).
    pub fn call_error(&self) -> Option<&Error> {
        self.source_as()
    }

    /// The model's failure, when kind is `Model` (or `Protocol` from the driver).
    pub fn model_error(&self) -> Option<&ModelError> {
        self.source_as()
    }

    /// The protocol breach, when the reply or the input transcript could not be a
    /// conversation.
    pub fn protocol_error(&self) -> Option<&ProtocolError> {
        self.source_as()
    }

    /// The paused run, when the run paused (kind [`ErrorKind::Paused`], H2).
    pub fn paused(&self) -> Option<&PausedRun> {
        self.inner.paused.as_deref()
    }

    /// The paused run, to keep (serialize it) and resume with [`crate::Agent::resume`]; or
    /// this error, when the run did not pause.
    ///
    /// # Errors
    ///
    /// Returns `self` when the run ended in a failure rather than a pause.
    pub fn into_paused(mut self) -> Result<PausedRun, RunError> {
        match self.inner.paused.take() {
            Some(paused) => Ok(*paused),
            None => Err(self),
        }
    }

    /// Why a paused run was refused (kind [`ErrorKind::Resume`], H3, H4).
    pub fn resume_error(&self) -> Option<&ResumeError> {
        self.source_as()
    }

    /// The direct cause, if it is a `T`.
    fn source_as<T: StdError + 'static>(&self) -> Option<&T> {
        self.inner.error.source().and_then(|s| s.downcast_ref())
    }

    /// The conversation up to the failure: the input, then every complete turn, each call
    /// with its result (a call that never ran has the result `the tool call was cancelled`).
    ///
    /// For a paused run: the conversation up to the turn that paused, which ends with the
    /// calls that wait ([`PausedRun::transcript`]).
    pub fn transcript(&self) -> &[Message] {
        match &self.inner.paused {
            Some(paused) => paused.transcript(),
            None => &self.inner.transcript,
        }
    }

    /// The conversation up to the failure, owned.
    pub fn into_transcript(self) -> Vec<Message> {
        match self.inner.paused {
            Some(paused) => paused.into_transcript(),
            None => self.inner.transcript,
        }
    }

    /// The record of every call made, in call order (E3).
    pub fn calls(&self) -> &[CallRecord] {
        &self.inner.calls
    }

    /// Token usage of each turn that completed, from turn 1.
    pub fn usage(&self) -> &[Usage] {
        match &self.inner.paused {
            Some(paused) => paused.usage(),
            None => &self.inner.usage,
        }
    }
}

impl fmt::Debug for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunError")
            .field("kind", &self.kind())
            .field("permanent", &self.inner.permanent)
            .field("message", &self.message())
            .field("source", &self.inner.error.source())
            .field("tool", &self.inner.tool)
            .field("call_id", &self.inner.call_id)
            .field("transcript", &self.inner.transcript.len())
            .finish_non_exhaustive()
    }
}

/// The message; with `{:#}`, followed by each cause in the chain, as [`tool_core::Error`].
impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        tool_core::error::write_with_causes(f, self.message(), StdError::source(self))
    }
}

impl StdError for RunError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        let cause = self.inner.error.source()?;
        if self.inner.shows_cause {
            cause.source()
        } else {
            Some(cause)
        }
    }
}

impl From<BuildError> for RunError {
    fn from(e: BuildError) -> Self {
        RunError::with_source(ErrorKind::Declaration, "the agent is declared wrong", e)
            .with_permanent(true)
    }
}

impl From<ProtocolError> for RunError {
    fn from(e: ProtocolError) -> Self {
        RunError::with_source(ErrorKind::Protocol, e.to_string(), e)
    }
}

impl From<crate::agent::journal::JournalError> for RunError {
    fn from(e: crate::agent::journal::JournalError) -> Self {
        let kind = if e.is_cancelled() {
            ErrorKind::Cancelled
        } else {
            ErrorKind::Journal
        };
        RunError::with_source(kind, e.to_string(), e)
    }
}

impl From<ModelError> for RunError {
    fn from(e: ModelError) -> Self {
        let kind = match e {
            ModelError::Protocol(_) => ErrorKind::Protocol,
            _ => ErrorKind::Model,
        };
        let mut run = RunError::with_source(kind, format!("the model failed: {e}"), e);
        run.inner.shows_cause = true;
        run
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_errors_keep_kind_permanence_and_cause() {
        let cause = Error::with_source(
            ErrorKind::Availability,
            "the availability policy of `t` failed",
            "db down",
        )
        .into_permanent();
        let e = RunError::from_call(cause, "t", "c1");
        assert_eq!(e.kind(), ErrorKind::Availability);
        assert!(e.is(ErrorKind::Availability) && e.is(ErrorKind::Permanent));
        assert!(!e.is(ErrorKind::Panic));
        assert_eq!((e.tool(), e.call_id()), (Some("t"), Some("c1")));
        assert_eq!(
            e.call_error().map(Error::kind),
            Some(ErrorKind::Availability)
        );
        assert!(format!("{e:#}").ends_with("db down"));
    }

    #[test]
    fn build_errors_list_every_problem() {
        let e = BuildError::new(vec![BuildProblem::ZeroTurns, BuildProblem::ZeroConcurrency]);
        let text = e.to_string();
        assert!(
            text.contains("2 problems")
                && text.contains("max_turns")
                && text.contains("max_concurrency")
        );
        assert!(e.is(ErrorKind::Declaration));
        let core: Error = e.clone().into();
        assert_eq!(core.kind(), ErrorKind::Declaration);
        let run: RunError = e.into();
        assert_eq!(run.kind(), ErrorKind::Declaration);
    }
}
