//! Waiting for a future unless the caller cancels first, as a `select!` biased toward the
//! cancellation would, at the cost of one check of the token when the future is ready at
//! once (a model's events, the calls of a turn ending one after the other).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use tool_core::Context;

/// `future`'s output, or `None` when `ctx` is cancelled first (P4).
///
/// `cancelled` is `ctx.cancelled()`, made once by the caller and kept across its waits: its
/// waiter is registered only when `future` is not ready at once, and from then on it is
/// polled before `future` on every wake, as in `tokio::select! { biased; … }`. The token is
/// checked when the future is made (await it at once); `future` need not be pinned (a
/// stream's next item, or a `Pin<&mut _>` of a pinned one), so the wait keeps no state beyond
/// its fields.
///
/// # Cancel safety
///
/// Cancel safe when `future` is: dropping the returned future drops `future`.
pub(crate) fn unless_cancelled<'a, C: Future<Output = ()>, F: Future + Unpin>(
    ctx: &Context,
    cancelled: Pin<&'a mut C>,
    future: F,
) -> UnlessCancelled<'a, C, F> {
    UnlessCancelled {
        cancelled,
        future,
        waiting: false,
        already: ctx.is_cancelled(),
    }
}

/// The future of [`unless_cancelled`].
pub(crate) struct UnlessCancelled<'a, C, F> {
    cancelled: Pin<&'a mut C>,
    future: F,
    /// Whether `cancelled` was polled (its waiter registered).
    waiting: bool,
    /// Whether the context was cancelled when the future was made.
    already: bool,
}

impl<C: Future<Output = ()>, F: Future + Unpin> Future for UnlessCancelled<'_, C, F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if this.already || (this.waiting && this.cancelled.as_mut().poll(cx).is_ready()) {
            return Poll::Ready(None);
        }
        if let Poll::Ready(output) = Pin::new(&mut this.future).poll(cx) {
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
            unless_cancelled(&ctx, cancelled.as_mut(), std::future::ready(7)).await,
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
            unless_cancelled(&ctx, cancelled.as_mut(), std::future::ready(7)).await,
            None
        );
    }
}
