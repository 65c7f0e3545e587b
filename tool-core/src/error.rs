//! Errors: the text a handler approves for the model ([`ToolError`]), failures that end a run
//! ([`Permanent`]), and call and run failures ([`Error`], [`ErrorKind`]). Declaration problems
//! are the tool's own ([`crate::DeclarationError`]).

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

use crate::violation::Violation;

/// Any error a handler, policy or validator may return.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// Text the application approves for the model (E2).
///
/// A handler error whose `source()` chain holds a `ToolError` reaches the model as that
/// `ToolError`'s text and nothing of the errors wrapping it. Every other handler error reaches
/// the model as `the tool failed`. Do not put secrets, or facts the caller may not learn (that
/// a resource exists, say), in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    text: Cow<'static, str>,
    retry: bool,
}

impl ToolError {
    /// A failure the model may read, with this text.
    pub fn new(text: impl Into<Cow<'static, str>>) -> Self {
        Self {
            text: text.into(),
            retry: false,
        }
    }

    /// A failure the model may read that asks it to try again, differently (L1): it counts
    /// toward the tool's retry budget, as invalid arguments do.
    pub fn retry(text: impl Into<Cow<'static, str>>) -> Self {
        Self {
            text: text.into(),
            retry: true,
        }
    }

    /// The text the model receives.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether it asks the model to try again (L1).
    pub fn asks_retry(&self) -> bool {
        self.retry
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl StdError for ToolError {}

/// A failure that must end the run (P1): siblings are cancelled and joined, and the run
/// returns this failure (P2, P3). The model is told only `the tool failed`.
#[derive(Debug)]
pub struct Permanent {
    cause: BoxError,
}

impl Permanent {
    /// Marks `cause` as permanent.
    pub fn new(cause: impl Into<BoxError>) -> Self {
        Self {
            cause: cause.into(),
        }
    }

    /// The failure that made the run end.
    pub fn cause(&self) -> &(dyn StdError + Send + Sync + 'static) {
        &*self.cause
    }
}

impl fmt::Display for Permanent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("permanent failure")
    }
}

impl StdError for Permanent {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.cause)
    }
}

/// How a call ended where it really ran, for a handler that relays calls to another executor
/// (an MCP client calling a server's tool, T2). Returned anywhere in the handler's error
/// chain, it gives the local call the same outcome kind, with that kind's fixed text for the
/// model (`tool unavailable`, `the tool timed out`, `the call was cancelled`).
///
/// A relay cannot make a call succeed, approve text, or end the run: the kinds it can carry
/// have a fixed text for the model, or (invalid arguments) the violations the executor found,
/// whose text the model would read as a remote error's text anyway. An untrusted executor
/// claiming a kind therefore says no more to the model than its error text would. A
/// [`Permanent`] in the same chain wins.
#[derive(Debug)]
pub struct Relayed {
    kind: RelayedKind,
    /// What the model read there, for the kinds whose text is not fixed: the violations and
    /// their text ([`RelayedKind::InvalidArguments`]), or the denial ([`RelayedKind::Denied`]).
    carried: Option<(Vec<Violation>, String)>,
    /// The call's arguments, for a call that waits for approval there
    /// ([`RelayedKind::AwaitingApproval`]).
    arguments: Option<serde_json::Value>,
    source: Option<BoxError>,
}

/// The outcome kinds a [`Relayed`] error can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RelayedKind {
    /// The tool was hidden or unknown there (A4, A5).
    Unavailable,
    /// The call ran past a timeout there.
    TimedOut,
    /// The call was cancelled, there or on its way (P4).
    Cancelled,
    /// The arguments broke a rule checked there only (a custom validator, S5).
    InvalidArguments,
    /// The call was not approved there (H4, H6): the model reads the denial.
    Denied,
    /// The call waits for approval there (M3): here it waits too, as a call of a tool that
    /// requires approval does (H2), and runs again once approved.
    AwaitingApproval,
}

impl Relayed {
    /// A relayed call that ended as `kind`.
    ///
    /// For [`RelayedKind::InvalidArguments`] use [`Relayed::invalid_arguments`]: without
    /// violations the call reads as failed arguments with no violation listed.
    pub fn new(kind: RelayedKind) -> Self {
        Self {
            kind,
            carried: None,
            arguments: None,
            source: None,
        }
    }

    /// A relayed call whose arguments broke `violations` where it ran; `text` is what the model
    /// read there (their rendering, S2).
    pub fn invalid_arguments(violations: Vec<Violation>, text: impl Into<String>) -> Self {
        Self {
            kind: RelayedKind::InvalidArguments,
            carried: Some((violations, text.into())),
            arguments: None,
            source: None,
        }
    }

    /// A relayed call that was not approved where it ran; `text` is the denial the model read
    /// there (H4, H6).
    pub fn denied(text: impl Into<String>) -> Self {
        Self {
            kind: RelayedKind::Denied,
            carried: Some((Vec::new(), text.into())),
            arguments: None,
            source: None,
        }
    }

    /// A relayed call that waits for approval where it runs, for `reason` (the question asked
    /// there), with the call's `arguments` (M3): the call waits for approval here (H2), and
    /// once approved runs again ([`Context::is_approved`](crate::Context::is_approved)).
    pub fn awaiting_approval(reason: impl Into<String>, arguments: serde_json::Value) -> Self {
        Self {
            kind: RelayedKind::AwaitingApproval,
            carried: Some((Vec::new(), reason.into())),
            arguments: Some(arguments),
            source: None,
        }
    }

    /// The arguments of a relayed call that waits for approval.
    pub fn arguments(&self) -> Option<&serde_json::Value> {
        self.arguments.as_ref()
    }

    /// What the model read there, for a kind whose text is not fixed (invalid arguments, a
    /// denial).
    pub fn text(&self) -> Option<&str> {
        self.carried.as_ref().map(|(_, text)| text.as_str())
    }

    /// The violations of a relayed [`RelayedKind::InvalidArguments`], and their text.
    pub fn violations(&self) -> Option<(&[Violation], &str)> {
        self.carried
            .as_ref()
            .filter(|_| self.kind == RelayedKind::InvalidArguments)
            .map(|(violations, text)| (violations.as_slice(), text.as_str()))
    }

    /// The same, keeping `source` for the application (E3).
    pub fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// How the relayed call ended.
    pub fn kind(&self) -> RelayedKind {
        self.kind
    }
}

impl fmt::Display for Relayed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            RelayedKind::Unavailable => "the relayed call found the tool unavailable",
            RelayedKind::TimedOut => "the relayed call timed out",
            RelayedKind::Cancelled => "the relayed call was cancelled",
            RelayedKind::InvalidArguments => "the relayed call's arguments broke its rules",
            RelayedKind::Denied => "the relayed call was not approved",
            RelayedKind::AwaitingApproval => "the relayed call waits for approval",
        })
    }
}

impl StdError for Relayed {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn StdError + 'static))
    }
}

/// Finds the first error of type `T` in `error`'s `source()` chain, `error` included.
pub fn find_in_chain<'a, T: StdError + 'static>(
    error: &'a (dyn StdError + 'static),
) -> Option<&'a T> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<T>() {
            return Some(found);
        }
        current = e.source();
    }
    None
}

/// A panic the framework contained (E4), as an error: the panic's message.
///
/// [`Tool::available`](crate::Tool::available) returns it (boxed) for a panicking policy, so
/// that a caller can tell a panic from the policy's own error with [`find_in_chain`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Panicked {
    message: String,
}

impl Panicked {
    /// A contained panic described by `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// What the panic said, with what was running.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// What kind of failure an [`Error`] is; match on it. Serialized as its snake_case name
/// (a durable run's journal records a call's error by its kind alone, W4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// A tool or agent was declared wrong (D2, N3, V1): found before any model I/O.
    Declaration,
    /// An availability policy failed (A3, A6). At execution it is also permanent.
    Availability,
    /// A handler returned [`Permanent`] (P1).
    Permanent,
    /// A handler or policy panicked (E4). Always permanent.
    Panic,
    /// A handler failed in an ordinary way; the run goes on.
    Handler,
    /// A custom validator failed operationally (S5); the run goes on.
    Validation,
    /// A call ran past its timeout; the run goes on.
    Timeout,
    /// The run, or a call, was cancelled (P2, P4).
    Cancelled,
    /// The run reached its turn limit (R3).
    MaxTurns,
    /// The model or its provider failed.
    Model,
    /// The model broke the protocol (a reply that cannot be a turn, say).
    Protocol,
    /// The model's final reply was cut off at its output token limit: a partial answer is
    /// not an answer. The run's error keeps the partial text and the usage.
    Truncated,
    /// An approval predicate failed (H1): the call does not run, and the run ends (it is
    /// permanent, as a policy failure at a call is).
    Approval,
    /// A hook ended the run before a call's handler ran (K1): the error's source is the
    /// hook's cause. Always permanent.
    Hook,
    /// The run paused: some calls wait for approval or for their results (H2, H5). Not a
    /// failure: the run's error holds the paused run, to resume.
    Paused,
    /// A paused run could not be resumed: it was altered, its tools changed, or the decisions
    /// do not fit its pending calls (H3, H4).
    Resume,
    /// A tool failed more calls in a row than its retry budget allows (L1): invalid
    /// arguments, or a handler asking the model to try again. The run's error names the tool
    /// and keeps the last call's violations.
    RetriesExhausted,
    /// The run reached one of its usage limits (requests, tokens, tool calls) before the
    /// request or call that would cross it (L2). The run's error keeps the usage so far.
    UsageLimit,
    /// A durable run's journal failed (W1): the engine refused a step, could not record it,
    /// or a replayed step no longer fits the agent that replays it.
    Journal,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ErrorKind::Declaration => "declaration",
            ErrorKind::Availability => "availability",
            ErrorKind::Permanent => "permanent",
            ErrorKind::Panic => "panic",
            ErrorKind::Handler => "handler",
            ErrorKind::Validation => "validation",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::MaxTurns => "max turns",
            ErrorKind::Model => "model",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Truncated => "truncated",
            ErrorKind::Approval => "approval",
            ErrorKind::Hook => "hook",
            ErrorKind::Paused => "paused",
            ErrorKind::Resume => "resume",
            ErrorKind::RetriesExhausted => "retries exhausted",
            ErrorKind::UsageLimit => "usage limit",
            ErrorKind::Journal => "journal",
        };
        f.write_str(s)
    }
}

/// A failure, for the application: its kind, whether it ends the run, what happened, and its
/// cause. Cheap to clone. Never shown to the model as it is (E2, E3).
///
/// [`Error::is`] answers for the kind and for `Permanent`: a policy failure during a call is
/// of kind `Availability` and also permanent (A6), a panic is of kind `Panic` and permanent.
#[derive(Clone)]
pub struct Error {
    inner: Arc<Inner>,
    permanent: bool,
}

struct Inner {
    kind: ErrorKind,
    message: Cow<'static, str>,
    source: Option<BoxError>,
}

impl Error {
    /// An error of `kind` that says `message`.
    pub fn new(kind: ErrorKind, message: impl Into<Cow<'static, str>>) -> Self {
        Self::build(kind, message.into(), None)
    }

    /// An error of `kind` that says `message`, caused by `source`. A handler error whose
    /// chain holds [`Permanent`] becomes of kind `Permanent`.
    pub fn with_source(
        kind: ErrorKind,
        message: impl Into<Cow<'static, str>>,
        source: impl Into<BoxError>,
    ) -> Self {
        Self::build(kind, message.into(), Some(source.into()))
    }

    fn build(kind: ErrorKind, message: Cow<'static, str>, source: Option<BoxError>) -> Self {
        let chain_permanent = source
            .as_deref()
            .is_some_and(|s| find_in_chain::<Permanent>(s).is_some());
        let kind = match kind {
            ErrorKind::Handler | ErrorKind::Validation if chain_permanent => ErrorKind::Permanent,
            other => other,
        };
        let permanent = chain_permanent
            || matches!(
                kind,
                ErrorKind::Permanent | ErrorKind::Panic | ErrorKind::Declaration
            );
        Self {
            inner: Arc::new(Inner {
                kind,
                message,
                source,
            }),
            permanent,
        }
    }

    /// The same error, marked permanent: it ends the run (A6).
    #[must_use]
    pub fn into_permanent(mut self) -> Self {
        self.permanent = true;
        self
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// Whether this error is of `kind`, or permanent when `kind` is `Permanent`.
    pub fn is(&self, kind: ErrorKind) -> bool {
        self.inner.kind == kind || (kind == ErrorKind::Permanent && self.permanent)
    }

    /// Whether this failure ends the run (P1, A6, E4).
    pub fn is_permanent(&self) -> bool {
        self.permanent
    }

    /// What happened, for the application.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// The [`ToolError`] in the cause chain, if any.
    pub fn tool_error(&self) -> Option<&ToolError> {
        self.inner
            .source
            .as_deref()
            .and_then(|s| find_in_chain::<ToolError>(s))
    }

    /// The first [`Relayed`] outcome in the cause chain, if any (T2).
    pub fn relayed(&self) -> Option<&Relayed> {
        self.inner
            .source
            .as_deref()
            .and_then(|s| find_in_chain::<Relayed>(s))
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.inner.kind)
            .field("permanent", &self.permanent)
            .field("message", &self.inner.message)
            .field("source", &self.inner.source)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_with_causes(f, &self.inner.message, StdError::source(self))
    }
}

/// Writes `message`; with the alternate flag (`{:#}`), then `: ` and each cause of the chain
/// that starts at `source`, as [`Error`] and the run's error display themselves.
///
/// # Errors
///
/// Returns the formatter's error.
pub fn write_with_causes(
    f: &mut fmt::Formatter<'_>,
    message: &str,
    source: Option<&(dyn StdError + 'static)>,
) -> fmt::Result {
    f.write_str(message)?;
    if f.alternate() {
        let mut source = source;
        while let Some(s) = source {
            write!(f, ": {s}")?;
            source = s.source();
        }
    }
    Ok(())
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|s| s as &(dyn StdError + 'static))
    }
}
