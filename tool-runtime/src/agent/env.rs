//! [`Env`]: what a run borrows from its caller and its agent, never part of its state; and
//! [`Effects`], the one way a run reaches what it does outside itself.

use tokio::sync::Semaphore;
use tool_core::Context;

use super::batch::{Batch, CallsEnd};
use super::compose::nest::Nest;
use super::error::RunError;
use super::event::Sink;
use super::output::CallRecord;
use super::pause::BoxFuture;
use super::reply::{Reply, ReplyError};
use super::shared::Shared;
use crate::model::ModelRequest;

/// What a run borrows from its caller and its agent: never part of its state.
#[derive(Clone, Copy)]
pub(crate) struct Env<'a> {
    pub(crate) shared: &'a Shared,
    /// The caller's context, carrying the run's id (W2).
    pub(crate) ctx: &'a Context,
    pub(crate) sink: &'a Sink,
    /// How the run takes its effects: here and now, or as steps of a journal (W1).
    pub(crate) effects: &'a dyn Effects,
    /// The run's side of its sub-agent runs (B1, B2), when it holds sub-agents.
    pub(crate) nest: Option<&'a Nest>,
    /// The side of the run that started this one, when this is a sub-agent's run (B1).
    pub(crate) parent: Option<&'a Nest>,
}

/// The effects of a run (U2): discovery, a model request and a turn's calls. The run loop
/// takes each through this, whatever the run: `effects::Live` takes them here and now,
/// `effects::Journaled` as steps of a durable run's journal, which answers them on a replay
/// without taking them again (W1). Adding an effect means adding it here, where both
/// implementations must say what it is.
pub(crate) trait Effects: Sync {
    /// The run's id when these effects fix it (a durable run's is its journal's, W1).
    fn run_id(&self) -> Option<&str>;

    /// Discovery (A2, A3): for each of the agent's tools, whether the run advertises it.
    fn discover<'a>(&'a self, env: Env<'a>) -> BoxFuture<'a, Result<Vec<bool>, RunError>>;

    /// The model request of turn `turn`, its reply read whole (R1), inside the request's
    /// `chat` span.
    fn request<'a>(
        &'a self,
        env: Env<'a>,
        request: ModelRequest<'a>,
        turn: usize,
        chat: &'a tracing::Span,
    ) -> BoxFuture<'a, Result<Reply, ReplyError>>;

    /// The calls of `batch`, each to its tool at `targets` (`None`: not callable in this run,
    /// A5), with their records in call order and how the batch ended (P1–P4).
    fn calls<'a>(
        &'a self,
        env: Env<'a>,
        batch: Batch<'a>,
        targets: &'a [Option<usize>],
        turn: usize,
        slots: &'a Semaphore,
    ) -> BoxFuture<'a, (Vec<CallRecord>, CallsEnd)>;
}
