//! [`Batch`]: the calls a turn runs, and [`CallsEnd`]: how they ended.

use crate::model::ToolCall;

/// The calls to run: those of a model turn, or at resume the approved calls of the paused
/// turn, with the position of each in that turn (H4).
#[derive(Clone, Copy)]
pub(crate) struct Batch<'a> {
    pub(crate) calls: &'a [ToolCall],
    pub(crate) approved: Option<&'a [usize]>,
}

impl<'a> Batch<'a> {
    /// The calls of a model turn.
    pub(crate) fn turn(calls: &'a [ToolCall]) -> Self {
        Self {
            calls,
            approved: None,
        }
    }

    /// Approved calls of a paused turn, at these positions in it.
    pub(crate) fn approved(calls: &'a [ToolCall], positions: &'a [usize]) -> Self {
        Self {
            calls,
            approved: Some(positions),
        }
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
