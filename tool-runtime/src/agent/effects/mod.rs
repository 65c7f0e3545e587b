//! The two ways a run takes its effects ([`Effects`]): [`Live`], here and now, and
//! [`Journaled`], as steps of a durable run's journal (W1).
//!
//! - `journaled`: discovery and a model request as journal steps, and what a step records.
//!   (A journaled turn's calls are in `agent::calls`, beside the live ones they share their
//!   parts with.)

mod journaled;

use tokio::sync::Semaphore;

use super::batch::{Batch, CallsEnd};
use super::calls;
use super::discovery;
use super::env::{Effects, Env};
use super::error::RunError;
use super::journal::Journal;
use super::output::CallRecord;
use super::pause::BoxFuture;
use super::reply::{Reply, ReplyError, read_reply};
use crate::model::ModelRequest;

/// Effects taken here and now: a run in one process.
pub(crate) struct Live;

impl Effects for Live {
    fn run_id(&self) -> Option<&str> {
        None
    }

    fn discover<'a>(&'a self, env: Env<'a>) -> BoxFuture<'a, Result<Vec<bool>, RunError>> {
        Box::pin(discovery::discover(env.shared, env.ctx))
    }

    fn request<'a>(
        &'a self,
        env: Env<'a>,
        request: ModelRequest<'a>,
        turn: usize,
        chat: &'a tracing::Span,
    ) -> BoxFuture<'a, Result<Reply, ReplyError>> {
        let stream = chat.in_scope(|| env.shared.model.stream(request));
        Box::pin(read_reply(stream, env.ctx, env.sink, turn, &env.shared.set))
    }

    fn calls<'a>(
        &'a self,
        env: Env<'a>,
        batch: Batch<'a>,
        targets: &'a [Option<usize>],
        turn: usize,
        slots: &'a Semaphore,
    ) -> BoxFuture<'a, (Vec<CallRecord>, CallsEnd)> {
        Box::pin(calls::run_live(env, batch, targets, turn, slots))
    }
}

/// Effects taken as steps of `journal` (W1): each recorded as it is taken, and answered from
/// the record, without being taken again, when the run is replayed from the same journal.
pub(crate) struct Journaled<'j>(pub(crate) &'j dyn Journal);

impl Effects for Journaled<'_> {
    fn run_id(&self) -> Option<&str> {
        Some(self.0.run_id())
    }

    fn discover<'a>(&'a self, env: Env<'a>) -> BoxFuture<'a, Result<Vec<bool>, RunError>> {
        Box::pin(journaled::discover(self.0, env))
    }

    fn request<'a>(
        &'a self,
        env: Env<'a>,
        request: ModelRequest<'a>,
        turn: usize,
        chat: &'a tracing::Span,
    ) -> BoxFuture<'a, Result<Reply, ReplyError>> {
        Box::pin(journaled::request(self.0, env, request, turn, chat))
    }

    fn calls<'a>(
        &'a self,
        env: Env<'a>,
        batch: Batch<'a>,
        targets: &'a [Option<usize>],
        turn: usize,
        slots: &'a Semaphore,
    ) -> BoxFuture<'a, (Vec<CallRecord>, CallsEnd)> {
        Box::pin(calls::run_journaled(
            self.0, env, batch, targets, turn, slots,
        ))
    }
}
