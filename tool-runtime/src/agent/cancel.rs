//! Waiting for a future unless the caller cancels first, as a `select!` biased toward the
//! cancellation would, at the cost of one check of the token when the future is ready at
//! once (a model's events, the calls of a turn ending one after the other).

use std::future::Future;
use std::pin::{Pin, pin};
use std::task::Poll;

use tool_core::Context;

/// `future`'s output, or `None` when `ctx` is cancelled first (P4).
///
/// `cancelled` is `ctx.cancelled()`, made once by the caller and kept across its waits: its
/// waiter is registered only when `future` is not ready at once, and from then on it is
/// polled before `future` on every wake, as in `tokio::select! { biased; … }`.
///
/// # Cancel safety
///
/// Cancel safe when `future` is: dropping the returned future drops `future`.
pub(crate) async fn unless_cancelled<F: Future>(
    ctx: &Context,
    cancelled: Pin<&mut impl Future<Output = ()>>,
    future: F,
) -> Option<F::Output> {
    if ctx.is_cancelled() {
        return None;
    }
    UnlessCancelled {
        cancelled,
        future: pin!(future),
        waiting: false,
    }
    .await
}

/// The future of [`unless_cancelled`], once the token was checked.
struct UnlessCancelled<'a, C, F> {
    cancelled: Pin<&'a mut C>,
    future: Pin<&'a mut F>,
    /// Whether `cancelled` was polled (its waiter registered).
    waiting: bool,
}

impl<C: Future<Output = ()>, F: Future> Future for UnlessCancelled<'_, C, F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if this.waiting && this.cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        if let Poll::Ready(output) = this.future.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        if !this.waiting {
            this.waiting = true;
            if this.cancelled.as_mut().poll(cx).is_ready() {
                return Poll::Ready(None);
            }
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_ready_future_wins_until_the_context_is_cancelled() {
        let ctx = Context::new();
        let cancelled = ctx.cancelled();
        tokio::pin!(cancelled);
        assert_eq!(
            unless_cancelled(&ctx, cancelled.as_mut(), async { 7 }).await,
            Some(7)
        );
        let waiting = unless_cancelled(&ctx, cancelled.as_mut(), std::future::pending::<()>());
        let cancel = async {
            tokio::task::yield_now().await;
            ctx.cancellation().cancel();
        };
        let (waited, ()) = tokio::join!(waiting, cancel);
        assert_eq!(waited, None);
        assert_eq!(
            unless_cancelled(&ctx, cancelled.as_mut(), async { 7 }).await,
            None
        );
    }
}
