//! The context parameters of a `#[tool]` handler (C1): the value each one takes, looked up
//! by type in the call's context. Generated code calls these at the span of the parameter's
//! type, so a type that cannot come from a context is reported there.

use crate::context::Context;
use crate::error::BoxError;

/// A type a handler can borrow from the context: what [`Context::with`] can hold.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a context value: a context holds `Send + Sync + 'static` values only",
    label = "taken from the run's context",
    note = "put a thread-safe, owned type in the context (an `Arc<Mutex<…>>` for shared mutable state) and take that"
)]
pub trait ContextValue: Send + Sync + 'static {}

impl<T: Send + Sync + 'static> ContextValue for T {}

/// A type a handler takes from the context by value (`#[context]`): a clone of the value.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is taken from the context by value (`#[context]`), so it must be `Clone`",
    label = "cloned from the run's context for each call",
    note = "derive or implement `Clone` for it, put it in the context inside an `Arc`, or take it by reference without `#[context]`"
)]
pub trait ContextClone: Clone + ContextValue {}

impl<T: Clone + ContextValue> ContextClone for T {}

/// The context value of type `T` a handler borrows (C1).
///
/// # Errors
///
/// When the context holds none, which the availability check of every call rules out first:
/// a redacted failure.
pub fn context_value<T: ContextValue>(ctx: &Context) -> Result<&T, BoxError> {
    ctx.require::<T>().map_err(Into::into)
}

/// A clone of the context value of type `T`, for a handler that takes it by value (C1).
///
/// # Errors
///
/// As [`context_value`].
pub fn context_clone<T: ContextClone>(ctx: &Context) -> Result<T, BoxError> {
    context_value::<T>(ctx).cloned()
}
