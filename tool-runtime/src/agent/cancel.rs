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
    unless_cancelled_unpin(false, cancelled, pin!(future)).await
}

/// As [`unless_cancelled`], for a future that need not be pinned (a stream's next item), with
/// no state beyond its fields: the token is checked now, when the future is made (await it
/// at once).
///
/// # Cancel safety
///
/// As [`unless_cancelled`].
pub(crate) fn next_unless_cancelled<'a, C: Future<Output = ()>, F: Future + Unpin>(
    ctx: &Context,
    cancelled: Pin<&'a mut C>,
    future: F,
) -> UnlessCancelled<'a, C, F> {
    unless_cancelled_unpin(ctx.is_cancelled(), cancelled, future)
}

/// The future that gives `future`'s output unless `cancelled` is ready first, or `None` at
/// once when `already` (the token was seen cancelled).
fn unless_cancelled_unpin<C: Future<Output = ()>, F: Future + Unpin>(
    already: bool,
    cancelled: Pin<&mut C>,
    future: F,
) -> UnlessCancelled<'_, C, F> {
    UnlessCancelled {
        cancelled,
        future,
        waiting: false,
        already,
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

    /// `next_unless_cancelled` answers as `unless_cancelled` does: a ready future before and
    /// after the cancellation, and a pending one cancelled while it waits.
    #[tokio::test]
    async fn the_unpinned_form_answers_as_the_general_one() {
        let ctx = Context::new();
        let cancelled = ctx.cancelled();
        tokio::pin!(cancelled);
        for cancel in [false, true] {
            if cancel {
                ctx.cancellation().cancel();
            }
            let general = unless_cancelled(&ctx, cancelled.as_mut(), std::future::ready(7)).await;
            let unpinned =
                next_unless_cancelled(&ctx, cancelled.as_mut(), std::future::ready(7)).await;
            assert_eq!(general, unpinned);
            assert_eq!(unpinned, (!cancel).then_some(7));
        }
        let ctx = Context::new();
        let cancelled = ctx.cancelled();
        tokio::pin!(cancelled);
        let waiting = next_unless_cancelled(&ctx, cancelled.as_mut(), std::future::pending::<()>());
        let cancel = async {
            tokio::task::yield_now().await;
            ctx.cancellation().cancel();
        };
        let (waited, ()) = tokio::join!(waiting, cancel);
        assert_eq!(waited, None);
    }
}
