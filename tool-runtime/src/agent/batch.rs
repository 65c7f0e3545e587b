//! [`Batch`]: the calls a turn runs, and [`CallsEnd`]: how they ended.

use std::collections::BTreeSet;

use crate::model::ToolCall;

/// The calls to run: those of a model turn, or at resume the approved calls of the paused
/// turn, with the position of each in that turn (H4).
#[derive(Clone, Copy)]
pub(crate) struct Batch<'a> {
    pub(crate) calls: &'a [ToolCall],
    pub(crate) approved: Option<&'a [usize]>,
    /// The tools a decision allowed for the rest of the run (B3).
    pub(crate) allowed: Option<&'a BTreeSet<String>>,
}

impl<'a> Batch<'a> {
    /// The calls of a model turn.
    pub(crate) fn turn(calls: &'a [ToolCall]) -> Self {
        Self {
            calls,
            approved: None,
            allowed: None,
        }
    }

    /// Approved calls of a paused turn, at these positions in it.
    pub(crate) fn approved(calls: &'a [ToolCall], positions: &'a [usize]) -> Self {
        Self {
            calls,
            approved: Some(positions),
            allowed: None,
        }
    }

    /// The batch, whose calls of the tools in `allowed` run approved (B3).
    pub(crate) fn with_allowed(mut self, allowed: &'a BTreeSet<String>) -> Self {
        if !allowed.is_empty() {
            self.allowed = Some(allowed);
        }
        self
    }

    /// Whether the batch's call `index` runs approved: an approved call of a paused turn
    /// (H4), or a call of a tool allowed for the run (B3).
    pub(crate) fn approves(&self, index: usize) -> bool {
        self.approved.is_some()
            || self.allowed.is_some_and(|allowed| {
                self.calls
                    .get(index)
                    .is_some_and(|call| allowed.contains(&*call.name))
            })
    }

    /// The batch's calls.
    pub(crate) fn calls(&self) -> &'a [ToolCall] {
        self.calls
    }

    /// The position in its turn of the batch's call `index`.
    pub(crate) fn position(&self, index: usize) -> usize {
        match self.approved {
            None => index,
            Some(positions) => positions.get(index).copied().unwrap_or(index),
        }
    }
}

/// How the calls of a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallsEnd {
    /// Every call ended; none was fatal.
    Done,
    /// The call at this position failed fatally first (P1, A6, E4); the others were
    /// cancelled and joined.
    Fatal(usize),
    /// The caller's context was cancelled (P4); the calls in flight were dropped.
    Cancelled,
}
