//! Availability policies (A1): observational, concurrency-safe checks of a [`Context`].

use std::future::Future;
use std::pin::Pin;

use crate::context::Context;
use crate::error::BoxError;

/// A boxed, `Send` future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Decides whether a tool is offered, from the context alone (A1).
///
/// A policy must only observe: it runs once per run at discovery (A2) and again before every
/// call (A4), possibly concurrently. `Ok(false)` hides the tool; an error ends the run (A3,
/// A6). Implement it with [`Tool`](crate::Tool)'s builder helpers (`available_fn`,
/// `available_async`) or `#[tool(available = path)]` rather than by hand.
pub trait Policy: Send + Sync + 'static {
    /// Whether the tool is available in `ctx`.
    fn check<'a>(&'a self, ctx: &'a Context) -> BoxFuture<'a, Result<bool, BoxError>>;
}

/// A policy from a plain `fn(&Context) -> Result<bool, E>`.
#[derive(Debug, Clone, Copy)]
pub struct SyncPolicy<F>(pub F);

impl<F, E> Policy for SyncPolicy<F>
where
    F: Fn(&Context) -> Result<bool, E> + Send + Sync + 'static,
    E: Into<BoxError>,
{
    fn check<'a>(&'a self, ctx: &'a Context) -> BoxFuture<'a, Result<bool, BoxError>> {
        // Called when polled, so that a panic surfaces where the caller contains it (E4).
        Box::pin(async move { (self.0)(ctx).map_err(Into::into) })
    }
}

/// An async function of a borrowed context, as a trait that names its future (so that it can
/// be required to be `Send`). Implemented for every `async fn(&Context) -> Result<bool, E>`.
pub trait AsyncPolicyFn<'a>: Send + Sync + 'static {
    /// The future the function returns.
    type Future: Future<Output = Result<bool, Self::Error>> + Send + 'a;
    /// Its error type.
    type Error: Into<BoxError>;
    /// Calls the function.
    fn call(&self, ctx: &'a Context) -> Self::Future;
}

impl<'a, F, Fut, E> AsyncPolicyFn<'a> for F
where
    F: Fn(&'a Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<bool, E>> + Send + 'a,
    E: Into<BoxError>,
{
    type Future = Fut;
    type Error = E;

    fn call(&self, ctx: &'a Context) -> Fut {
        self(ctx)
    }
}

/// A policy from an `async fn(&Context) -> Result<bool, E>`.
#[derive(Debug, Clone, Copy)]
pub struct AsyncPolicy<F>(pub F);

impl<F> Policy for AsyncPolicy<F>
where
    F: for<'a> AsyncPolicyFn<'a>,
{
    fn check<'a>(&'a self, ctx: &'a Context) -> BoxFuture<'a, Result<bool, BoxError>> {
        Box::pin(async move { self.0.call(ctx).await.map_err(Into::into) })
    }
}
