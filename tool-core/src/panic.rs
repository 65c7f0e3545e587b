//! Containing panics of handlers, policies and any application code a transport calls (E4).

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Polls a future, turning a panic in it into an `Err` with the panic's message.
///
/// The panic hook still runs (and prints, by default); nothing of the panic goes further
/// than the `Err`.
pub struct CatchUnwind<F: ?Sized> {
    inner: Pin<Box<F>>,
}

impl<F: Future> CatchUnwind<F> {
    /// Wraps `inner`.
    pub fn new(inner: F) -> Self {
        Self {
            inner: Box::pin(inner),
        }
    }
}

impl<F: Future + ?Sized> CatchUnwind<F> {
    /// Wraps a future that is boxed already (a `BoxFuture`), without boxing it again.
    pub fn boxed(inner: Pin<Box<F>>) -> Self {
        Self { inner }
    }
}

impl<F: Future + ?Sized> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.inner.as_mut();
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(message(payload.as_ref()))),
        }
    }
}

/// Runs a closure, turning a panic into an `Err` with the panic's message.
///
/// # Errors
///
/// Returns the panic's message when `f` panics.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| message(p.as_ref()))
}

/// The message of a panic's payload: its text when it is a string.
pub fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a payload that is not a string".to_owned()
    }
}
