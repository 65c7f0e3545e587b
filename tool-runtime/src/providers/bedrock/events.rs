//! Reading a ConverseStream answer: `messageStart`, `contentBlockStart` (a `toolUse` with
//! its id and name), `contentBlockDelta` (`text`, a fragment of a `toolUse`'s `input`, a piece
//! of reasoning, a citation), `contentBlockStop`, `messageStop` (the `stopReason`) and
//! `metadata` (the usage, a guardrail's trace); unknown events are ignored, a block start or
//! delta of a kind the service model does not define is an error, and exceptions are errors.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::frames::Frame;
use super::{guardrail, reasoning};
use crate::model::{ApiError, FinishReason, ModelError, ModelEvent, Usage};
use crate::providers::http::preview;

/// The event that ends a complete answer.
pub(super) const END_MARKER: &str = "messageStop";

/// The kinds of `contentBlockStart.start` the service model defines.
const STARTS: &[&str] = &["toolUse", "toolResult", "image"];
/// The kinds of `contentBlockDelta.delta` the service model defines.
const DELTAS: &[&str] = &[
    "text",
    "toolUse",
    "toolResult",
    "reasoningContent",
    "citation",
    "image",
];

/// The state of one answer being read.
#[derive(Debug, Default)]
pub(super) struct ConverseEvents {
    /// The `toolUse` blocks open, by index, with whether any input fragment came.
    tools: HashMap<usize, bool>,
    /// The reasoning blocks open, by index (in order, for those never stopped).
    reasoning: BTreeMap<usize, reasoning::Streaming>,
    /// The reasoning blocks complete, in order.
    thought: Vec<Value>,
    /// The index of the reply's first call, which keeps the reasoning.
    first_call: Option<usize>,
    stopped: bool,
    intervened: bool,
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
            "contentBlockStart" => self.on_start(index_of(data)?, data, out)?,
            "contentBlockDelta" => self.on_delta(index_of(data)?, data, out)?,
            "contentBlockStop" => self.on_stop(index_of(data)?, out)?,
            "messageStop" => {
                self.stopped = true;
                // Blocks never stopped end with the message.
                for (_, block) in std::mem::take(&mut self.reasoning) {
                    self.thought.push(block.finish()?);
                }
                self.keep_reasoning(out);
                if let Some(reason) = data.get("stopReason").and_then(Value::as_str) {
                    self.intervened = reason == guardrail::INTERVENED;
                    out.push(ModelEvent::Finish(finish_reason(reason)));
                }
            }
            "metadata" => {
                if let Some(found) = data.get("usage").filter(|u| u.is_object()) {
                    out.push(ModelEvent::Usage(usage(found)));
                }
                if self.intervened {
                    let trace = data.pointer("/trace/guardrail");
                    guardrail::report(trace, self.request_id.as_deref());
                    self.intervened = false;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// `contentBlockStart`: a `toolUse` starts a call; the other kinds the service model
    /// defines are not read.
    fn on_start(
        &mut self,
        index: usize,
        data: &Value,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        let start = data.get("start").unwrap_or(&Value::Null);
        known_kind(start, STARTS, "contentBlockStart")?;
        if let Some(tool) = start.get("toolUse") {
            let field = |k: &str| tool.get(k).and_then(Value::as_str).unwrap_or_default();
            out.push(ModelEvent::ToolCallStart {
                index,
                id: field("toolUseId").to_owned(),
                name: field("name").to_owned(),
            });
            self.tools.insert(index, false);
            self.first_call.get_or_insert(index);
        }
        Ok(())
    }

    /// `contentBlockDelta`: text, a fragment of a call's input, or a piece of reasoning;
    /// citations (their text came as `text`) and the other kinds are not read.
    fn on_delta(
        &mut self,
        index: usize,
        data: &Value,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        let delta = data.get("delta").unwrap_or(&Value::Null);
        known_kind(delta, DELTAS, "contentBlockDelta")?;
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
        if let Some(piece) = delta.get("reasoningContent") {
            self.reasoning.entry(index).or_default().push(piece)?;
        }
        Ok(())
    }

    /// `contentBlockStop`: a call's input is complete, or a reasoning block is.
    fn on_stop(&mut self, index: usize, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        if let Some(block) = self.reasoning.remove(&index) {
            self.thought.push(block.finish()?);
        }
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
        Ok(())
    }

    /// The reply's reasoning, kept on its first call (V3): sent back with it.
    fn keep_reasoning(&mut self, out: &mut Vec<ModelEvent>) {
        if let Some(index) = self.first_call
            && !self.thought.is_empty()
        {
            out.push(ModelEvent::ToolCallSignature {
                index,
                signature: reasoning::signature(&self.thought),
            });
        }
    }
}

/// A block start or delta must be an object whose kind the service model defines: one it does
/// not (garbage, or a kind newer than this driver) is an error that names it.
fn known_kind(value: &Value, known: &[&str], event: &str) -> Result<(), ModelError> {
    let Some(members) = value.as_object() else {
        return Err(ModelError::Protocol(format!(
            "a ConverseStream `{event}` event holds no content block"
        )));
    };
    match members.keys().find(|k| !known.contains(&k.as_str())) {
        Some(unknown) => Err(ModelError::Protocol(format!(
            "a ConverseStream `{event}` event holds a content block of unknown type `{unknown}`"
        ))),
        None => Ok(()),
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

/// The kinds of content block the service model defines (`ContentBlock`).
const BLOCKS: &[&str] = &[
    "text",
    "image",
    "document",
    "video",
    "audio",
    "toolUse",
    "toolResult",
    "guardContent",
    "cachePoint",
    "reasoningContent",
    "citationsContent",
    "searchResult",
    "toolAddition",
    "toolRemoval",
];

/// The events of a whole Converse answer (`output.message.content`, `stopReason`, `usage`),
/// as a stream of it would have given them: text (a `citationsContent` block's generated text
/// too), calls, and the reasoning kept on the first call. A guardrail's intervention is
/// named from `trace.guardrail`.
///
/// # Errors
///
/// [`ModelError::Protocol`] for a content block that is not an object of a kind the service
/// model defines, a malformed reasoning block, or a citations block without its text.
pub(super) fn from_converse(
    answer: &Value,
    request_id: Option<&str>,
) -> Result<Vec<ModelEvent>, ModelError> {
    let mut out = Vec::new();
    let mut thought = Vec::new();
    let mut first_call = None;
    let content = answer
        .pointer("/output/message/content")
        .and_then(Value::as_array);
    for (index, block) in content.into_iter().flatten().enumerate() {
        known_kind(block, BLOCKS, "Converse answer's content")?;
        if let Some(text) = block
            .get("text")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            out.push(ModelEvent::TextDelta(text.to_owned()));
        }
        if let Some(cited) = block.get("citationsContent") {
            out.extend(cited_text(cited)?.map(ModelEvent::TextDelta));
        }
        if let Some(found) = block.get("reasoningContent") {
            thought.push(reasoning::from_block(found)?);
        }
        if let Some(tool) = block.get("toolUse") {
            first_call.get_or_insert(index);
            out.extend(whole_call(index, tool));
        }
    }
    if let Some(index) = first_call.filter(|_| !thought.is_empty()) {
        out.push(ModelEvent::ToolCallSignature {
            index,
            signature: reasoning::signature(&thought),
        });
    }
    if let Some(found) = answer.get("usage").filter(|u| u.is_object()) {
        out.push(ModelEvent::Usage(usage(found)));
    }
    if let Some(reason) = answer.get("stopReason").and_then(Value::as_str) {
        if reason == guardrail::INTERVENED {
            guardrail::report(answer.pointer("/trace/guardrail"), request_id);
        }
        out.push(ModelEvent::Finish(finish_reason(reason)));
    }
    Ok(out)
}

/// The events of one whole `toolUse` block.
fn whole_call(index: usize, tool: &Value) -> [ModelEvent; 3] {
    let field = |k: &str| tool.get(k).and_then(Value::as_str).unwrap_or_default();
    let input = tool
        .get("input")
        .map_or_else(|| "{}".to_owned(), Value::to_string);
    [
        ModelEvent::ToolCallStart {
            index,
            id: field("toolUseId").to_owned(),
            name: field("name").to_owned(),
        },
        ModelEvent::ToolCallArguments {
            index,
            fragment: input,
        },
        ModelEvent::ToolCallEnd { index },
    ]
}

/// The text a `citationsContent` block generated (its `content[].text`), in order. The
/// citations themselves are not passed on: no driver exposes a provider's citations.
fn cited_text(block: &Value) -> Result<impl Iterator<Item = String>, ModelError> {
    let malformed = || {
        ModelError::Protocol(
            "a Bedrock citationsContent block has no `content` list of texts".to_owned(),
        )
    };
    let texts = block
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(malformed)?
        .iter()
        .map(|piece| piece.get("text").and_then(Value::as_str).map(str::to_owned))
        .collect::<Option<Vec<String>>>()
        .ok_or_else(malformed)?;
    Ok(texts.into_iter().filter(|t| !t.is_empty()))
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
