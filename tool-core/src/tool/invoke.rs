//! The transport-neutral call pipeline (DESIGN §2): availability → decode → parse → (approval)
//! → handler → render, with failures mapped for the model and kept for the application.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::approval::{Approval, NOT_APPROVED};
use crate::context::Context;
use crate::error::{Error, ErrorKind, RelayedKind};
use crate::hook::{HookCall, Scope};
use crate::json::DecodeError;
use crate::panic::{CatchUnwind, catch};
use crate::tool::gate::Gate;
use crate::tool::{ErasedHandler, ErasedInput, HandlerFuture, Image, ParsedInput, Rendered, Tool};
use crate::violation::{ParseCx, Rule, Violation, render_violations};

/// What the model is told when a tool is hidden, or does not exist (A4, A5).
pub const UNAVAILABLE: &str = "tool unavailable";
/// What the model is told when a tool failed and approved no text (E2).
pub const FAILED: &str = "the tool failed";
/// What the model is told when a call ran past its timeout.
pub const TIMED_OUT: &str = "the tool timed out";
/// What the model is told when a call was cancelled.
pub const CANCELLED: &str = "the tool call was cancelled";
/// The text of a call that awaits approval (H2). The agent loop never sends it to the model:
/// the run pauses instead, and the call's result is decided at resume.
pub const AWAITING_APPROVAL: &str = "the call awaits approval";
/// The text of a call of a deferred tool (H5). The agent loop never sends it to the model:
/// the run pauses instead, and the call's result is given at resume.
pub const DEFERRED: &str = "the call awaits its result from elsewhere";

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
    /// The call passed the availability re-check and validation, and waits for approval; its
    /// handler has not run (H1, H2). [`Outcome::approval_reason`] says why.
    AwaitingApproval,
    /// The call of a deferred tool passed the availability re-check and validation, and waits
    /// for its result from elsewhere (H5).
    Deferred,
    /// The call was not approved; its handler never ran. The model got the denial's message
    /// (H4, H6).
    Denied,
}

impl OutcomeKind {
    /// Whether a call that ended so waits for a decision or a result: the run pauses (H2,
    /// H5).
    pub fn is_pending(self) -> bool {
        matches!(self, OutcomeKind::AwaitingApproval | OutcomeKind::Deferred)
    }
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
            OutcomeKind::AwaitingApproval => "awaiting_approval",
            OutcomeKind::Deferred => "deferred",
            OutcomeKind::Denied => "denied",
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
    /// What a pending call waits with (kinds `AwaitingApproval` and `Deferred`).
    pending: Option<Box<Pending>>,
}

/// What a pending call waits with: its validated arguments and, when it awaits approval, the
/// predicate's reason.
#[derive(Debug, Clone)]
struct Pending {
    arguments: Value,
    reason: Option<String>,
}

impl Outcome {
    /// An outcome of `kind` with `text` and nothing else.
    fn plain(kind: OutcomeKind, text: String) -> Self {
        Self {
            kind,
            text,
            violations: Vec::new(),
            images: Vec::new(),
            error: None,
            pending: None,
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
            pending: None,
        }
    }

    /// A successful call whose result renders as `text`.
    pub fn success(text: String) -> Self {
        Self::plain(OutcomeKind::Success, text)
    }

    /// A call that waits for approval, for `reason`, with its validated `arguments` (H2).
    pub fn awaiting_approval(reason: impl Into<String>, arguments: Value) -> Self {
        Self {
            pending: Some(Box::new(Pending {
                arguments,
                reason: Some(reason.into()),
            })),
            ..Self::plain(OutcomeKind::AwaitingApproval, AWAITING_APPROVAL.to_owned())
        }
    }

    /// A call of a deferred tool, waiting for its result, with its validated `arguments` (H5).
    pub fn deferred(arguments: Value) -> Self {
        Self {
            pending: Some(Box::new(Pending {
                arguments,
                reason: None,
            })),
            ..Self::plain(OutcomeKind::Deferred, DEFERRED.to_owned())
        }
    }

    /// A call that was not approved: the model reads `message` (H4), by default
    /// [`NOT_APPROVED`].
    pub fn denied(message: impl Into<String>) -> Self {
        Self::plain(OutcomeKind::Denied, message.into())
    }

    /// The same outcome with `text`, which the application approved for the model, as its
    /// text: kind `Rejected`, the error kept for the application (K1: a hook's replacement).
    pub(crate) fn approved(self, text: String) -> Self {
        Self {
            error: self.error,
            ..Self::plain(OutcomeKind::Rejected, text)
        }
    }

    /// A call that was not approved, with the default message [`NOT_APPROVED`].
    pub fn not_approved() -> Self {
        Self::denied(NOT_APPROVED)
    }

    /// The answer to a hidden or unknown tool (A4, A5).
    pub fn unavailable() -> Self {
        Self::plain(OutcomeKind::Unavailable, UNAVAILABLE.to_owned())
    }

    /// Arguments that broke the schema.
    pub fn invalid(violations: Vec<Violation>, dropped: usize) -> Self {
        Self {
            kind: OutcomeKind::InvalidArguments,
            text: render_violations(&violations, dropped),
            violations,
            images: Vec::new(),
            error: None,
            pending: None,
        }
    }

    /// A call that ran past its timeout.
    pub fn timed_out(error: Error) -> Self {
        Self {
            error: Some(error),
            ..Self::plain(OutcomeKind::TimedOut, TIMED_OUT.to_owned())
        }
    }

    /// A call that was cancelled.
    pub fn cancelled(error: Error) -> Self {
        Self {
            error: Some(error),
            ..Self::plain(OutcomeKind::Cancelled, CANCELLED.to_owned())
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
                RelayedKind::Denied => (
                    OutcomeKind::Denied,
                    relayed.text().unwrap_or(NOT_APPROVED).to_owned(),
                ),
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
            error: Some(error),
            violations,
            ..Self::plain(kind, text)
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

    /// Whether the call waits for a decision or a result (H2, H5).
    pub fn is_pending(&self) -> bool {
        self.kind.is_pending()
    }

    /// Why the call awaits approval, as its predicate said (kind `AwaitingApproval`, H2).
    pub fn approval_reason(&self) -> Option<&str> {
        self.pending.as_ref().and_then(|p| p.reason.as_deref())
    }

    /// The arguments of a pending call as validated (S2: defaults filled in), rendered as
    /// JSON: what the handler would receive (kinds `AwaitingApproval` and `Deferred`, H2).
    pub fn validated_arguments(&self) -> Option<&Value> {
        self.pending.as_ref().map(|p| &p.arguments)
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
    /// A tool that requires approval answers a call that passed 1 and 2 with kind
    /// `AwaitingApproval` when its predicate says so (H1), and a deferred tool with kind
    /// `Deferred` (H5); the handler does not run. [`Tool::invoke_approved`] runs a call that
    /// was approved.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the handler's future at its current await point.
    pub async fn invoke_with(&self, ctx: &Context, args: &[u8], limits: &Limits) -> Outcome {
        self.call(ctx, args, limits, false, None).await
    }

    /// Runs one call that was approved (H4, H6): the same pipeline as
    /// [`Tool::invoke_with`], availability re-check and validation included, without asking
    /// the approval predicate again. A deferred tool still answers kind `Deferred`: it has
    /// no handler here.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the handler's future at its current await point.
    pub async fn invoke_approved(&self, ctx: &Context, args: &[u8], limits: &Limits) -> Outcome {
        self.call(ctx, args, limits, true, None).await
    }

    /// The pipeline, with the transport's hooks around the handler when it has any (K1).
    pub(crate) async fn call(
        &self,
        ctx: &Context,
        args: &[u8],
        limits: &Limits,
        approved: bool,
        hooks: Option<Scope<'_>>,
    ) -> Outcome {
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
        if self.can_pause() || hooks.is_some() {
            // Boxed: the calls of every other tool keep a future of their own size, and a
            // call without hooks pays this branch only (K1).
            return Box::pin(self.gated(ctx, args, approved, hooks)).await;
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
        self.finish(future).await
    }

    /// The rest of a call of a tool that can pause, or that hooks wrap, after the
    /// availability re-check: parse and validate, then ask for approval (H1) or pause a
    /// deferred call (H5), then run the hooks' `before`, the handler and their `after` (K1).
    async fn gated(
        &self,
        ctx: &Context,
        args: &[u8],
        approved: bool,
        hooks: Option<Scope<'_>>,
    ) -> Outcome {
        let parser: &dyn ErasedInput = match (self.handler(), self.deferred_input()) {
            (Some(handler), _) => &**handler,
            (None, Some(input)) => &**input,
            (None, None) => {
                return Outcome::failure(Error::new(
                    ErrorKind::Declaration,
                    format!("tool `{}` has no handler", self.name()),
                ));
            }
        };
        let mut cx = ParseCx::new();
        let input = match catch(|| parser.parse(args, &mut cx)) {
            Ok(Ok(Some(input))) => input,
            Ok(Ok(None)) => return self.parse_failure(cx),
            Ok(Err(e)) => {
                return Outcome::invalid(vec![root_violation(Rule::Syntax, e.to_string())], 0);
            }
            Err(panic) => return self.panicked("while parsing its arguments", &panic),
        };
        let Some(handler) = self.handler() else {
            return Outcome::deferred(parser.to_json(&input));
        };
        if !approved {
            match self.gate() {
                None => {}
                Some(Gate::Always) => {
                    return Outcome::awaiting_approval(
                        format!("every call of `{}` needs approval", self.name()),
                        parser.to_json(&input),
                    );
                }
                Some(Gate::Predicate(predicate)) => {
                    let check = predicate.check(ctx, &*input);
                    match CatchUnwind::boxed(check).await {
                        Ok(Ok(Approval::NotRequired)) => {}
                        Ok(Ok(Approval::Required { reason })) => {
                            return Outcome::awaiting_approval(reason, parser.to_json(&input));
                        }
                        Ok(Err(cause)) => {
                            return Outcome::failure(
                                Error::with_source(
                                    ErrorKind::Approval,
                                    format!("the approval predicate of `{}` failed", self.name()),
                                    cause,
                                )
                                .into_permanent(),
                            );
                        }
                        Err(panic) => {
                            return Outcome::failure(Error::new(
                                ErrorKind::Panic,
                                format!(
                                    "the approval predicate of `{}` panicked: {panic}",
                                    self.name()
                                ),
                            ));
                        }
                    }
                }
            }
        }
        let Some(hooks) = hooks else {
            return self.run(handler, ctx, input).await;
        };
        // K1: the hooks see the arguments as validated, and only once the call may run.
        let arguments = parser.to_json(&input);
        let call = HookCall::new(self, ctx, &arguments, hooks.transport());
        if let Some(stopped) = hooks.before(&call).await {
            return stopped;
        }
        let outcome = self.run(handler, ctx, input).await;
        hooks.after(&call, outcome).await
    }

    /// Runs the handler on a parsed input to the outcome.
    async fn run(
        &self,
        handler: &Arc<dyn ErasedHandler>,
        ctx: &Context,
        input: ParsedInput,
    ) -> Outcome {
        let future = match catch(|| handler.run(ctx.clone(), input)) {
            Ok(Some(future)) => future,
            Ok(None) => {
                return Outcome::failure(Error::new(
                    ErrorKind::Declaration,
                    format!(
                        "tool `{}` parsed its arguments into a type its handler does not take",
                        self.name()
                    ),
                ));
            }
            Err(panic) => return self.panicked("", &panic),
        };
        self.finish(future).await
    }

    /// Runs the handler's future to the outcome: the rendered result (E1) or the mapped
    /// failure (E2), a panic contained (E4).
    async fn finish(&self, future: HandlerFuture) -> Outcome {
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
