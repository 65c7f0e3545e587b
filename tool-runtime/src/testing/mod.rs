//! Models that need no provider, a network or a key:
//!
//! - [`ScriptedModel`] replays replies written in advance and records every request, for
//!   tests;
//! - [`ConversationModel`] replies by the conversation's turn, not by a counter, for runs
//!   that restart (W10);
//! - [`OfflineModel`] calls your tools with arguments generated from their schemas, then sums
//!   up what came back;
//! - [`generate`]: those arguments, valid or deliberately invalid, for any JSON Schema.
//!
//! Each streams its replies as a provider would, in real deltas.

mod conversation;
pub mod generate;
mod offline;
mod scripted;

use crate::model::{FinishReason, ModelEvent, ToolCall, Usage};

pub use conversation::{ConversationModel, ConversationTurn};
pub use offline::{Arguments, OfflineModel};
pub use scripted::{RecordedRequest, ScriptedModel, ScriptedTurn};

/// The events of a complete reply: `text` in a few deltas, then each call (start, its
/// arguments in up to three fragments, end), then usage and the finish reason. Used by the
/// test models, so that the agent always reads real deltas.
fn reply_events(text: &str, calls: &[ToolCall], usage: Option<Usage>) -> Vec<ModelEvent> {
    let mut events: Vec<ModelEvent> = chunks(text, 16)
        .into_iter()
        .map(|piece| ModelEvent::TextDelta(piece.to_owned()))
        .collect();
    for (index, call) in calls.iter().enumerate() {
        events.push(ModelEvent::ToolCallStart {
            index,
            id: call.id.to_string(),
            name: call.name.to_string(),
        });
        let size = call.arguments.len().div_ceil(3).max(1);
        for piece in chunks(&call.arguments, size) {
            events.push(ModelEvent::ToolCallArguments {
                index,
                fragment: piece.to_owned(),
            });
        }
        events.push(ModelEvent::ToolCallEnd { index });
    }
    if let Some(usage) = usage {
        events.push(ModelEvent::Usage(usage));
    }
    events.push(ModelEvent::Finish(if calls.is_empty() {
        FinishReason::Stop
    } else {
        FinishReason::ToolCalls
    }));
    events
}

/// Splits `text` into pieces of about `size` bytes, on character boundaries.
fn chunks(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = size.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (piece, tail) = rest.split_at(end);
        out.push(piece);
        rest = tail;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_characters_whole() {
        let text = "héllo wörld, ünïcode";
        let pieces = chunks(text, 3);
        assert_eq!(pieces.concat(), text);
        assert!(pieces.len() > 3);
    }

    #[test]
    fn reply_events_stream_every_call() {
        let calls = [
            ToolCall::new("a", "t", r#"{"x":1}"#),
            ToolCall::new("b", "u", ""),
        ];
        let events = reply_events("hi", &calls, Some(Usage::new(3, 4)));
        assert_eq!(events.first(), Some(&ModelEvent::TextDelta("hi".into())));
        assert!(events.contains(&ModelEvent::ToolCallEnd { index: 1 }));
        assert_eq!(
            events.last(),
            Some(&ModelEvent::Finish(FinishReason::ToolCalls))
        );
    }
}
