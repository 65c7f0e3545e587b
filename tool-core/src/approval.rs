//! Approval of calls (H1): whether a call may run now or must wait for someone to say yes.
//!
//! A tool requires approval always ([`ToolBuilder::require_approval`], `#[tool(approval =
//! always)]`), or when a predicate over the call's [`Context`] and its *validated* input says
//! so ([`ToolBuilder::approval_async`], [`ToolBuilder::approval_fn`], `#[tool(approval =
//! path)]`). The predicate runs after the availability re-check and validation, never for a
//! call that fails them; it must only observe, like an availability policy.
//!
//! [`ToolBuilder::require_approval`]: crate::ToolBuilder::require_approval
//! [`ToolBuilder::approval_async`]: crate::ToolBuilder::approval_async
//! [`ToolBuilder::approval_fn`]: crate::ToolBuilder::approval_fn

use std::future::Future;

use crate::context::Context;
use crate::error::BoxError;
use crate::policy::BoxFuture;

/// What the model is told when a call was denied without a message of its own (H4, H6).
pub const NOT_APPROVED: &str = "the call was not approved";

/// What an approval predicate decides for one call (H1).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approval {
    /// The call runs now, without asking anyone.
    NotRequired,
    /// The call waits for a decision. `reason` is shown to whoever decides (it is not sent to
    /// the model): say what the call would do and why it needs a yes.
    Required {
        /// Why the call needs approval.
        reason: String,
    },
}

impl Approval {
    /// The call waits for a decision, for `reason`.
    pub fn required(reason: impl Into<String>) -> Self {
        Approval::Required {
            reason: reason.into(),
        }
    }

    /// The call runs now.
    pub fn not_required() -> Self {
        Approval::NotRequired
    }

    /// Whether the call waits for a decision.
    pub fn is_required(&self) -> bool {
        matches!(self, Approval::Required { .. })
    }

    /// The reason, when the call waits for a decision.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Approval::NotRequired => None,
            Approval::Required { reason } => Some(reason),
        }
    }
}

/// Decides whether a call of a tool whose input is `I` needs approval (H1).
///
/// It sees the call's context and the input as parsed and validated (S2), never arguments
/// that failed validation. Like an availability policy it must only observe: it may run
/// concurrently with other calls. An error (or a panic) ends the run, as a policy error does
/// at a call (kind `Approval`, permanent): a call whose need for approval is unknown does not
/// run. Implement it with [`ToolBuilder`](crate::ToolBuilder)'s helpers (`approval_fn`,
/// `approval_async`) or `#[tool(approval = path)]` rather than by hand.
pub trait ApprovalPredicate<I>: Send + Sync + 'static {
    /// Whether this call of the tool needs approval.
    fn check<'a>(
        &'a self,
        ctx: &'a Context,
        input: &'a I,
    ) -> BoxFuture<'a, Result<Approval, BoxError>>;
}

/// An approval predicate from a plain `fn(&Context, &I) -> Result<Approval, E>`.
#[derive(Debug, Clone, Copy)]
pub struct SyncApproval<F>(pub F);

impl<I, F, E> ApprovalPredicate<I> for SyncApproval<F>
where
    I: Sync + 'static,
    F: Fn(&Context, &I) -> Result<Approval, E> + Send + Sync + 'static,
    E: Into<BoxError>,
{
    fn check<'a>(
        &'a self,
        ctx: &'a Context,
        input: &'a I,
    ) -> BoxFuture<'a, Result<Approval, BoxError>> {
        // Called when polled, so that a panic surfaces where the caller contains it (E4).
        Box::pin(async move { (self.0)(ctx, input).map_err(Into::into) })
    }
}

/// An async function of a borrowed context and input, as a trait that names its future (so
/// that it can be required to be `Send`). Implemented for every
/// `async fn(&Context, &I) -> Result<Approval, E>`.
pub trait AsyncApprovalFn<'a, I: 'a>: Send + Sync + 'static {
    /// The future the function returns.
    type Future: Future<Output = Result<Approval, Self::Error>> + Send + 'a;
    /// Its error type.
    type Error: Into<BoxError>;
    /// Calls the function.
    fn call(&self, ctx: &'a Context, input: &'a I) -> Self::Future;
}

impl<'a, I, F, Fut, E> AsyncApprovalFn<'a, I> for F
where
    I: 'a,
    F: Fn(&'a Context, &'a I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Approval, E>> + Send + 'a,
    E: Into<BoxError>,
{
    type Future = Fut;
    type Error = E;

    fn call(&self, ctx: &'a Context, input: &'a I) -> Fut {
        self(ctx, input)
    }
}

/// An approval predicate from an `async fn(&Context, &I) -> Result<Approval, E>`.
#[derive(Debug, Clone, Copy)]
pub struct AsyncApproval<F>(pub F);

impl<I, F> ApprovalPredicate<I> for AsyncApproval<F>
where
    I: Sync + 'static,
    F: for<'a> AsyncApprovalFn<'a, I>,
{
    fn check<'a>(
        &'a self,
        ctx: &'a Context,
        input: &'a I,
    ) -> BoxFuture<'a, Result<Approval, BoxError>> {
        Box::pin(async move { self.0.call(ctx, input).await.map_err(Into::into) })
    }
}
