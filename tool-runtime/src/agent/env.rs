//! [`Env`]: what a run borrows from its caller and its agent, never part of its state.

use tool_core::Context;

use super::event::Sink;
use super::journal::Journal;
use super::shared::Shared;

/// What a run borrows from its caller and its agent: never part of its state.
#[derive(Clone, Copy)]
pub(crate) struct Env<'a> {
    pub(crate) shared: &'a Shared,
    /// The caller's context, carrying the run's id (W2).
    pub(crate) ctx: &'a Context,
    pub(crate) sink: &'a Sink,
    /// Where a durable run records its steps (W1); `None` for a run in one process.
    pub(crate) journal: Option<&'a dyn Journal>,
}
