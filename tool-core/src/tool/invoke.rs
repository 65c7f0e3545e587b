//! The transport-neutral call pipeline (DESIGN §2): availability → decode → parse → handler →
//! render, with failures mapped for the model and kept for the application.

use std::fmt;

use crate::context::Context;
use crate::error::{Error, ErrorKind, RelayedKind};
use crate::json::DecodeError;
use crate::panic::{CatchUnwind, catch};
use crate::tool::{Image, Rendered, Tool};
use crate::violation::{ParseCx, Rule, Violation, render_violations};

/// What the model is told when a tool is hidden, or does not exist (A4, A5).
pub const UNAVAILABLE: &str = "tool unavailable";
/// What the model is told when a tool failed and approved no text (E2).
pub const FAILED: &str = "the tool failed";
/// What the model is told when a call ran past its timeout.
pub const TIMED_OUT: &str = "the tool timed out";
/// What the model is told when a call was cancelled.
pub const CANCELLED: &str = "the tool call was cancelled";

/// The largest arguments accepted by default: 1 MiB.
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 1 << 20;

/// Limits applied to a call's arguments before they are decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest arguments accepted, in bytes.
    pub max_argument_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_argument_bytes: DEFAULT_MAX_ARGUMENT_BYTES,
        }
    }
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OutcomeKind {
    /// The handler returned a result.
    Success,
    /// The tool is hidden by its policy, or does not exist (A4, A5).
    Unavailable,
    /// The arguments broke the schema; the handler did not run (S2).
    InvalidArguments,
    /// The handler failed with text it approved for the model ([`crate::ToolError`]).
    Rejected,
    /// The handler (or a validator) failed; the model was told only `the tool failed` (E2).
    Failed,
    /// The call ran past its timeout.
    TimedOut,
    /// The call was cancelled.
    Cancelled,
    /// The call failed in a way that ends the run: a permanent failure, a policy error or a
    /// panic (P1, A6, E4).
    Fatal,
}

impl fmt::Display for OutcomeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            OutcomeKind::Success => "success",
            OutcomeKind::Unavailable => "unavailable",
            OutcomeKind::InvalidArguments => "invalid_arguments",
            OutcomeKind::Rejected => "rejected",
            OutcomeKind::Failed => "failed",
            OutcomeKind::TimedOut => "timed_out",
            OutcomeKind::Cancelled => "cancelled",
            OutcomeKind::Fatal => "fatal",
        };
        f.write_str(s)
    }
}

/// The end of one call: the text the model receives, and for the application the violations
/// and the unredacted error (E3).
#[derive(Debug, Clone)]
pub struct Outcome {
    kind: OutcomeKind,
    text: String,
    violations: Vec<Violation>,
    /// The images of a successful result (O3).
    images: Vec<Image>,
    error: Option<Error>,
}

impl Outcome {
    /// A successful call whose result renders as `text`.
    pub fn success(text: String) -> Self {
        Self {
            kind: OutcomeKind::Success,
            text,
            violations: Vec::new(),
            images: Vec::new(),
            error: None,
        }
    }

    /// A successful call whose result rendered as `rendered`: its text, and the images beside
    /// it (O3).
    pub fn rendered(rendered: Rendered) -> Self {
        Self {
            kind: OutcomeKind::Success,
            text: rendered.text,
            violations: Vec::new(),
            images: rendered.images,
            error: None,
        }
    }

    /// The answer to a hidden or unknown tool (A4, A5).
    pub fn unavailable() -> Self {
        Self {
            kind: OutcomeKind::Unavailable,
            text: UNAVAILABLE.to_owned(),
            violations: Vec::new(),
            images: Vec::new(),
            error: None,
        }
    }

    /// Arguments that broke the schema.
    pub fn invalid(violations: Vec<Violation>, dropped: usize) -> Self {
        Self {
            kind: OutcomeKind::InvalidArguments,
            text: render_violations(&violations, dropped),
            violations,
            images: Vec::new(),
            error: None,
        }
    }

    /// A call that ran past its timeout.
    pub fn timed_out(error: Error) -> Self {
        Self {
            kind: OutcomeKind::TimedOut,
            text: TIMED_OUT.to_owned(),
            violations: Vec::new(),
            images: Vec::new(),
            error: Some(error),
        }
    }

    /// A call that was cancelled.
    pub fn cancelled(error: Error) -> Self {
        Self {
            kind: OutcomeKind::Cancelled,
            text: CANCELLED.to_owned(),
            violations: Vec::new(),
            images: Vec::new(),
            error: Some(error),
        }
    }

    /// A failed call: what the model reads follows E2 (the chain's [`crate::ToolError`] text,
    /// else `the tool failed`; never anything of a permanent failure). A handler failure whose
    /// chain holds a [`crate::Relayed`] outcome takes its kind and that kind's fixed text (T2).
    pub fn failure(error: Error) -> Self {
        let relayed = error
            .relayed()
            .filter(|_| error.kind() == ErrorKind::Handler);
        let mut violations = Vec::new();
        let (kind, text) = if error.is_permanent() {
            (OutcomeKind::Fatal, FAILED.to_owned())
        } else if let Some(relayed) = relayed {
            match relayed.kind() {
                RelayedKind::Unavailable => (OutcomeKind::Unavailable, UNAVAILABLE.to_owned()),
                RelayedKind::TimedOut => (OutcomeKind::TimedOut, TIMED_OUT.to_owned()),
                RelayedKind::InvalidArguments => {
                    let (found, text) = relayed.violations().unwrap_or((&[], "invalid arguments:"));
                    violations = found.to_vec();
                    (OutcomeKind::InvalidArguments, text.to_owned())
                }
                RelayedKind::Cancelled => (OutcomeKind::Cancelled, CANCELLED.to_owned()),
            }
        } else if let Some(approved) = error
            .tool_error()
            .filter(|_| error.kind() == ErrorKind::Handler)
        {
            (OutcomeKind::Rejected, approved.text().to_owned())
        } else {
            (OutcomeKind::Failed, FAILED.to_owned())
        };
        if matches!(kind, OutcomeKind::Failed | OutcomeKind::Fatal) {
            tracing::warn!(
                error = %format_args!("{error:#}"),
                kind = %error.kind(),
                permanent = error.is_permanent(),
                "tool call failed; the model is told only that it failed"
            );
        }
        Self {
            kind,
            text,
            violations,
            images: Vec::new(),
            error: Some(error),
        }
    }

    /// How the call ended.
    pub fn kind(&self) -> OutcomeKind {
        self.kind
    }

    /// The text the model receives.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The violations, when the arguments broke the schema.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// The images beside the text of a successful result (O3).
    pub fn images(&self) -> &[Image] {
        &self.images
    }

    /// The unredacted error, for the application (E3).
    pub fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }

    /// Whether this outcome ends the run (P1, A6, E4).
    pub fn is_fatal(&self) -> bool {
        self.kind == OutcomeKind::Fatal
    }
}

impl Tool {
    /// Runs one call with the default [`Limits`]. See [`Tool::invoke_with`].
    pub async fn invoke(&self, ctx: &Context, args: &[u8]) -> Outcome {
        self.invoke_with(ctx, args, &Limits::default()).await
    }

    /// Runs one call: the pipeline every transport shares.
    ///
    /// 1. Availability is checked first (A4): a denial gives `tool unavailable`; a policy
    ///    error or panic is fatal, of kind `Availability` or `Panic` (A6, E4).
    /// 2. The arguments are size-checked, decoded and parsed against the schema, collecting
    ///    every violation (S2–S4); on any, the handler does not run.
    /// 3. The handler runs; a panic in it is contained (E4).
    /// 4. The result is rendered (E1) or the failure mapped (E2), with the unredacted error
    ///    kept in the outcome (E3).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the handler's future at its current await point.
    pub async fn invoke_with(&self, ctx: &Context, args: &[u8], limits: &Limits) -> Outcome {
        if let Some(error) = self.declaration_error() {
            return Outcome::failure(Error::with_source(
                ErrorKind::Declaration,
                format!("tool `{}` is declared wrong and cannot run", self.name()),
                error.clone(),
            ));
        }
        if let Some(policy) = self.policy() {
            match CatchUnwind::boxed(policy.check(ctx)).await {
                Ok(Ok(true)) => {}
                Ok(Ok(false)) => return Outcome::unavailable(),
                Ok(Err(cause)) => {
                    return Outcome::failure(
                        Error::with_source(
                            ErrorKind::Availability,
                            format!("the availability policy of `{}` failed", self.name()),
                            cause,
                        )
                        .into_permanent(),
                    );
                }
                Err(panic) => {
                    return Outcome::failure(Error::new(
                        ErrorKind::Panic,
                        format!(
                            "the availability policy of `{}` panicked: {panic}",
                            self.name()
                        ),
                    ));
                }
            }
        }
        if args.len() > limits.max_argument_bytes {
            let e = DecodeError::TooLarge {
                len: args.len(),
                limit: limits.max_argument_bytes,
            };
            return Outcome::invalid(vec![root_violation(Rule::Size, e.to_string())], 0);
        }
        let Some(handler) = self.handler() else {
            return Outcome::failure(Error::new(
                ErrorKind::Declaration,
                format!("tool `{}` has no handler", self.name()),
            ));
        };
        let mut cx = ParseCx::new();
        let prepared = catch(|| handler.prepare(ctx.clone(), args, &mut cx));
        let future = match prepared {
            Ok(Ok(Some(future))) => future,
            Ok(Ok(None)) => return self.parse_failure(cx),
            Ok(Err(e)) => {
                return Outcome::invalid(vec![root_violation(Rule::Syntax, e.to_string())], 0);
            }
            Err(panic) => return self.panicked("while parsing its arguments", &panic),
        };
        match CatchUnwind::boxed(future).await {
            Ok(Ok(rendered)) => self.checked_output(rendered),
            Ok(Err(cause)) => Outcome::failure(Error::with_source(
                ErrorKind::Handler,
                format!("tool `{}` failed", self.name()),
                cause,
            )),
            Err(panic) => self.panicked("", &panic),
        }
    }

    /// A successful result, once checked against the tool's output schema (O1): one that does
    /// not fit fails the call, redacted (E2); the application reads why.
    fn checked_output(&self, rendered: Rendered) -> Outcome {
        let Some(output) = self.output_schema() else {
            return Outcome::rendered(rendered);
        };
        match output.check(&rendered.text) {
            Ok(()) => Outcome::rendered(rendered),
            Err(violations) => Outcome::failure(Error::new(
                ErrorKind::Handler,
                format!(
                    "tool `{}` returned a result that does not fit its output schema (are its \
                     `Serialize` and `Schema` derives renamed alike?): {}",
                    self.name(),
                    render_violations(&violations, 0)
                ),
            )),
        }
    }

    fn parse_failure(&self, cx: ParseCx) -> Outcome {
        let (mut violations, dropped, failure) = cx.finish();
        if let Some(cause) = failure {
            return Outcome::failure(Error::with_source(
                ErrorKind::Validation,
                format!("a validator of `{}` failed", self.name()),
                cause,
            ));
        }
        if violations.is_empty() {
            violations.push(root_violation(
                Rule::Type,
                "the arguments do not fit the schema".to_owned(),
            ));
        }
        Outcome::invalid(violations, dropped)
    }

    fn panicked(&self, when: &str, panic: &str) -> Outcome {
        let when = if when.is_empty() {
            String::new()
        } else {
            format!(" {when}")
        };
        Outcome::failure(Error::new(
            ErrorKind::Panic,
            format!("tool `{}` panicked{when}: {panic}", self.name()),
        ))
    }
}

fn root_violation(rule: Rule, message: String) -> Violation {
    Violation {
        path: String::new(),
        rule,
        message,
    }
}
