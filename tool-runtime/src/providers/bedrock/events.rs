//! Reading a ConverseStream answer: `messageStart`, `contentBlockStart` (a `toolUse` with
//! its id and name), `contentBlockDelta` (`text`, or a fragment of a `toolUse`'s `input`),
//! `contentBlockStop`, `messageStop` (the `stopReason`) and `metadata` (the usage); unknown
//! events and reasoning deltas are ignored, and exceptions are errors.

use std::collections::HashMap;

use serde_json::Value;

use super::frames::Frame;
use crate::model::{ApiError, FinishReason, ModelError, ModelEvent, Usage};
use crate::providers::http::preview;

/// The event that ends a complete answer.
pub(super) const END_MARKER: &str = "messageStop";

/// The state of one answer being read.
#[derive(Debug, Default)]
pub(super) struct ConverseEvents {
    /// The `toolUse` blocks open, by index, with whether any input fragment came.
    tools: HashMap<usize, bool>,
    stopped: bool,
    request_id: Option<String>,
}

/// `stopReason` as a [`FinishReason`]: `max_tokens` is a cut-off answer, guardrails and
/// content filters are the provider's filtering.
pub(super) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "guardrail_intervened" | "content_filtered" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// `usage` as a [`Usage`]: input tokens with the cached ones, and output tokens.
pub(super) fn usage(usage: &Value) -> Usage {
    let count = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
    let input = [
        "inputTokens",
        "cacheReadInputTokens",
        "cacheWriteInputTokens",
    ]
    .iter()
    .map(|k| count(k))
    .fold(0, u64::saturating_add);
    Usage::new(input, count("outputTokens"))
}

fn index_of(data: &Value) -> Result<usize, ModelError> {
    data.get("contentBlockIndex")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .ok_or_else(|| {
            ModelError::Protocol("a ConverseStream content block event has no index".into())
        })
}

impl ConverseEvents {
    /// Records the response's request id, for errors reported in the stream.
    pub(super) fn set_request_id(&mut self, id: Option<String>) {
        self.request_id = id;
    }

    /// Whether `messageStop` came.
    pub(super) fn stopped(&self) -> bool {
        self.stopped
    }

    /// Maps one frame, pushing what it means onto `out`.
    pub(super) fn on_frame(
        &mut self,
        frame: Frame,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        match frame {
            Frame::Event { kind, payload } => {
                let data: Value = serde_json::from_slice(&payload).map_err(|_| {
                    ModelError::Protocol(format!(
                        "a ConverseStream `{kind}` event is not JSON: {}",
                        preview(&String::from_utf8_lossy(&payload), 200)
                    ))
                })?;
                self.on_event(&kind, &data, out)
            }
            Frame::Exception { kind, payload } => {
                let data: Value = serde_json::from_slice(&payload).unwrap_or(Value::Null);
                let message = data
                    .get("message")
                    .or_else(|| data.get("Message"))
                    .and_then(Value::as_str)
                    .map_or_else(
                        || preview(&String::from_utf8_lossy(&payload), 300),
                        str::to_owned,
                    );
                Err(self.error(exception_name(&kind), message))
            }
            Frame::Error { code, message } => Err(self.error(code, message)),
        }
    }

    fn error(&self, kind: String, message: String) -> ModelError {
        let message = if message.is_empty() {
            "the stream failed".to_owned()
        } else {
            message
        };
        let mut api = ApiError::new(None, message);
        api.error_type = (!kind.is_empty()).then_some(kind);
        api.request_id = self.request_id.clone();
        ModelError::Api(api)
    }

    fn on_event(
        &mut self,
        kind: &str,
        data: &Value,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        match kind {
            "contentBlockStart" => {
                let index = index_of(data)?;
                if let Some(tool) = data.pointer("/start/toolUse") {
                    let field = |k: &str| tool.get(k).and_then(Value::as_str).unwrap_or_default();
                    out.push(ModelEvent::ToolCallStart {
                        index,
                        id: field("toolUseId").to_owned(),
                        name: field("name").to_owned(),
                    });
                    self.tools.insert(index, false);
                }
            }
            "contentBlockDelta" => {
                let index = index_of(data)?;
                let delta = data.get("delta").unwrap_or(&Value::Null);
                if let Some(text) = delta
                    .get("text")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    out.push(ModelEvent::TextDelta(text.to_owned()));
                }
                if let Some(input) = delta.pointer("/toolUse/input").and_then(Value::as_str)
                    && let Some(fragments) = self.tools.get_mut(&index)
                    && !input.is_empty()
                {
                    *fragments = true;
                    out.push(ModelEvent::ToolCallArguments {
                        index,
                        fragment: input.to_owned(),
                    });
                }
            }
            "contentBlockStop" => {
                let index = index_of(data)?;
                if let Some(fragments) = self.tools.remove(&index) {
                    if !fragments {
                        // A tool without parameters: no input was streamed.
                        out.push(ModelEvent::ToolCallArguments {
                            index,
                            fragment: "{}".to_owned(),
                        });
                    }
                    out.push(ModelEvent::ToolCallEnd { index });
                }
            }
            "messageStop" => {
                self.stopped = true;
                if let Some(reason) = data.get("stopReason").and_then(Value::as_str) {
                    out.push(ModelEvent::Finish(finish_reason(reason)));
                }
            }
            "metadata" => {
                if let Some(found) = data.get("usage").filter(|u| u.is_object()) {
                    out.push(ModelEvent::Usage(usage(found)));
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// An exception's type as the API names it (`throttlingException` in a frame is
/// `ThrottlingException` in an HTTP error).
fn exception_name(kind: &str) -> String {
    let mut chars = kind.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The events of a whole Converse answer (`output.message.content`, `stopReason`, `usage`),
/// as a stream of it would have given them.
pub(super) fn from_converse(answer: &Value) -> Vec<ModelEvent> {
    let mut out = Vec::new();
    let content = answer
        .pointer("/output/message/content")
        .and_then(Value::as_array);
    for (index, block) in content.into_iter().flatten().enumerate() {
        if let Some(text) = block
            .get("text")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            out.push(ModelEvent::TextDelta(text.to_owned()));
        }
        if let Some(tool) = block.get("toolUse") {
            let field = |k: &str| tool.get(k).and_then(Value::as_str).unwrap_or_default();
            out.push(ModelEvent::ToolCallStart {
                index,
                id: field("toolUseId").to_owned(),
                name: field("name").to_owned(),
            });
            let input = tool
                .get("input")
                .map_or_else(|| "{}".to_owned(), Value::to_string);
            out.push(ModelEvent::ToolCallArguments {
                index,
                fragment: input,
            });
            out.push(ModelEvent::ToolCallEnd { index });
        }
    }
    if let Some(found) = answer.get("usage").filter(|u| u.is_object()) {
        out.push(ModelEvent::Usage(usage(found)));
    }
    if let Some(reason) = answer.get("stopReason").and_then(Value::as_str) {
        out.push(ModelEvent::Finish(finish_reason(reason)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn v3_a_call_without_input_has_empty_object_arguments() {
        let mut events = ConverseEvents::default();
        let mut out = Vec::new();
        let start = json!({"contentBlockIndex": 0,
                           "start": {"toolUse": {"toolUseId": "t1", "name": "now"}}});
        let ok = events
            .on_event("contentBlockStart", &start, &mut out)
            .and_then(|()| {
                events.on_event(
                    "contentBlockStop",
                    &json!({"contentBlockIndex": 0}),
                    &mut out,
                )
            });
        assert!(ok.is_ok());
        assert_eq!(
            out[1],
            ModelEvent::ToolCallArguments {
                index: 0,
                fragment: "{}".into()
            }
        );
        assert_eq!(out[2], ModelEvent::ToolCallEnd { index: 0 });
    }

    #[test]
    fn v3_stop_reasons_are_named() {
        assert_eq!(finish_reason("max_tokens"), FinishReason::Length);
        assert_eq!(finish_reason("tool_use"), FinishReason::ToolCalls);
        assert_eq!(finish_reason("end_turn"), FinishReason::Stop);
        assert_eq!(
            finish_reason("guardrail_intervened"),
            FinishReason::ContentFilter
        );
        assert_eq!(
            finish_reason("content_filtered"),
            FinishReason::ContentFilter
        );
        assert_eq!(exception_name("throttlingException"), "ThrottlingException");
    }
}
