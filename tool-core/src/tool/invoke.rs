//! The transport-neutral call pipeline (DESIGN §2): availability → decode → parse → (approval)
//! → handler → render, with failures mapped for the model and kept for the application.

use std::sync::Arc;

use crate::approval::Approval;
use crate::context::Context;
use crate::error::{Error, ErrorKind};
use crate::hook::{HookCall, Scope};
use crate::json::DecodeError;
use crate::panic::{CatchUnwind, catch};
use crate::tool::gate::Gate;
use crate::tool::outcome::Outcome;
use crate::tool::{ErasedHandler, ErasedInput, HandlerFuture, ParsedInput, Rendered, Tool};
use crate::violation::{ParseCx, Rule, Violation, render_violations};

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
        // The handler of an approved call knows it was approved (M3).
        let approved_ctx;
        let ctx = if approved {
            approved_ctx = ctx.clone().approved_call();
            &approved_ctx
        } else {
            ctx
        };
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
            return Outcome::deferred(parser.to_json(&input, args));
        };
        let input = if approved {
            input
        } else {
            match self.approval(ctx, parser, input, args).await {
                Ok(input) => input,
                Err(stopped) => return stopped,
            }
        };
        let Some(hooks) = hooks else {
            return self.run(handler, ctx, input).await;
        };
        // K1: the hooks see the arguments as validated, and only once the call may run.
        let arguments = parser.to_json(&input, args);
        let call = HookCall::new(self, ctx, &arguments, hooks.transport());
        if let Some(stopped) = hooks.before(&call).await {
            return stopped;
        }
        if ctx.is_cancelled() {
            // The call was cancelled while a hook ran, or (M3) a hook's question ended it,
            // whatever the hook then decided: the handler does not run for an answer nobody
            // reads.
            return Outcome::cancelled(Error::new(
                ErrorKind::Cancelled,
                format!("`{}` was cancelled before its handler ran", self.name()),
            ));
        }
        let outcome = self.run(handler, ctx, input).await;
        hooks.after(&call, outcome).await
    }

    /// Whether a call that was not approved yet may run (H1): its input back when it needs no
    /// approval, else the outcome that ends it here (waiting for approval, or the predicate's
    /// failure). The input is held by value across the predicate, as a future that may move
    /// between threads holds it.
    async fn approval(
        &self,
        ctx: &Context,
        parser: &dyn ErasedInput,
        input: ParsedInput,
        args: &[u8],
    ) -> Result<ParsedInput, Outcome> {
        let predicate = match self.gate() {
            None => return Ok(input),
            Some(Gate::Always) => {
                return Err(Outcome::awaiting_approval(
                    format!("every call of `{}` needs approval", self.name()),
                    parser.to_json(&input, args),
                ));
            }
            Some(Gate::Predicate(predicate)) => predicate,
        };
        match CatchUnwind::boxed(predicate.check(ctx, &*input)).await {
            Ok(Ok(Approval::NotRequired)) => Ok(input),
            Ok(Ok(Approval::Required { reason })) => Err(Outcome::awaiting_approval(
                reason,
                parser.to_json(&input, args),
            )),
            Ok(Err(cause)) => Err(Outcome::failure(
                Error::with_source(
                    ErrorKind::Approval,
                    format!("the approval predicate of `{}` failed", self.name()),
                    cause,
                )
                .into_permanent(),
            )),
            Err(panic) => Err(Outcome::failure(Error::new(
                ErrorKind::Panic,
                format!(
                    "the approval predicate of `{}` panicked: {panic}",
                    self.name()
                ),
            ))),
        }
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
