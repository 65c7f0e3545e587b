//! The progress a call's handler reports through its context (K3), as events of the run's
//! stream ([`RunEvent::Progress`]).

use tool_core::Context;

use super::event::{RunEvent, Sink};
use crate::model::ToolCall;

/// `ctx`, the context of the call at `index` of turn `turn`, with its progress going to
/// `sink` as [`RunEvent::Progress`]. A run without a stream ([`crate::Agent::run`]) sets no
/// listener, so a handler's reports cost nothing there.
pub(crate) fn listen(
    ctx: Context,
    sink: &Sink,
    turn: usize,
    index: usize,
    call: &ToolCall,
) -> Context {
    if !sink.is_active() {
        return ctx;
    }
    let sink = sink.clone();
    let id = call.id.clone();
    let tool = call.name.clone();
    ctx.with_progress(move |progress| {
        sink.emit(|| RunEvent::Progress {
            turn,
            index,
            id: id.clone(),
            tool: tool.clone(),
            progress,
        });
    })
}
