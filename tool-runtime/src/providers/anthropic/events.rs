//! Reading a Messages stream: `message_start` (usage), `content_block_start` (text or
//! `tool_use`), `content_block_delta` (`text_delta`, `input_json_delta`),
//! `content_block_stop`, `message_delta` (stop reason, usage), `message_stop`; `ping` and
//! unknown events are ignored, `error` is an error. A `tool_search_tool_result` block (the
//! API's own tool search, Q1) reports the tools it loaded.

use std::collections::HashMap;

use serde_json::Value;

use crate::model::{ApiError, FinishReason, ModelError, ModelEvent, Usage};
use crate::providers::http::preview;
use crate::providers::sse::SseEvent;
use crate::providers::stream::{EventMapper, Flow};

/// A `tool_use` block being streamed.
#[derive(Debug)]
struct ToolUse {
    /// The `input` of `content_block_start`, sent as the arguments if no fragment comes.
    input: Value,
    fragments: bool,
}

#[derive(Debug, Default)]
pub(crate) struct AnthropicEvents {
    tools: HashMap<usize, ToolUse>,
    request_id: Option<String>,
}

fn count(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// Input tokens, cached ones included.
fn input_tokens(usage: &Value) -> u64 {
    [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .map(|k| count(usage, k))
    .fold(0, u64::saturating_add)
}

impl AnthropicEvents {
    fn error(&self, data: &Value) -> ModelError {
        let error = data.get("error").unwrap_or(data);
        let text = |k: &str| error.get(k).and_then(Value::as_str).map(str::to_owned);
        let mut api = ApiError::new(
            None,
            text("message").unwrap_or_else(|| "the stream failed".to_owned()),
        );
        api.error_type = text("type");
        api.request_id = self.request_id.clone().or_else(|| {
            data.get("request_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        ModelError::Api(api)
    }
}

/// The names a `tool_search_tool_result` block references (Q1); none for an error result.
fn loaded_tools(block: &Value) -> Vec<String> {
    let references = block
        .pointer("/content/tool_references")
        .and_then(Value::as_array);
    references
        .into_iter()
        .flatten()
        .filter(|r| r.get("type").and_then(Value::as_str) == Some("tool_reference"))
        .filter_map(|r| r.get("tool_name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

fn index_of(data: &Value) -> Result<usize, ModelError> {
    data.get("index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .ok_or_else(|| ModelError::Protocol("a Messages content block event has no index".into()))
}

impl AnthropicEvents {
    /// `message_start`: the response's id and model (K4), and the input's usage.
    fn message_start(&mut self, data: &Value, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        if let Some(message) = data.get("message") {
            let field = |k: &str| message.get(k).and_then(Value::as_str).unwrap_or_default();
            out.push(ModelEvent::Response {
                id: field("id").to_owned(),
                model: field("model").to_owned(),
            });
        }
        if let Some(usage) = data.pointer("/message/usage") {
            out.push(ModelEvent::Usage(Usage::new(
                input_tokens(usage),
                count(usage, "output_tokens"),
            )));
        }
        Ok(())
    }

    /// `content_block_start`: text, or a tool call's start with whatever input it carries.
    fn block_start(&mut self, data: &Value, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let index = index_of(data)?;
        let block = data.get("content_block").unwrap_or(&Value::Null);
        let field = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or_default();
        match field("type") {
            "text" if !field("text").is_empty() => {
                out.push(ModelEvent::TextDelta(field("text").to_owned()));
            }
            "tool_use" => {
                out.push(ModelEvent::ToolCallStart {
                    index,
                    id: field("id").to_owned(),
                    name: field("name").to_owned(),
                });
                self.tools.insert(
                    index,
                    ToolUse {
                        input: block.get("input").cloned().unwrap_or(Value::Null),
                        fragments: false,
                    },
                );
            }
            "tool_search_tool_result" => out.push(ModelEvent::ToolsLoaded {
                names: loaded_tools(block),
            }),
            _ => {}
        }
        Ok(())
    }

    /// `content_block_delta`: more text, or a fragment of a tool call's input.
    fn block_delta(&mut self, data: &Value, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let index = index_of(data)?;
        let delta = data.get("delta").unwrap_or(&Value::Null);
        let field = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or_default();
        match field("type") {
            "text_delta" if !field("text").is_empty() => {
                out.push(ModelEvent::TextDelta(field("text").to_owned()));
            }
            "input_json_delta" => {
                let fragment = field("partial_json");
                if let Some(tool) = self.tools.get_mut(&index)
                    && !fragment.is_empty()
                {
                    tool.fragments = true;
                    out.push(ModelEvent::ToolCallArguments {
                        index,
                        fragment: fragment.to_owned(),
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// `content_block_stop`: a tool call's end (its whole input first, when it came at its start).
    fn block_stop(&mut self, data: &Value, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let index = index_of(data)?;
        if let Some(tool) = self.tools.remove(&index) {
            if !tool.fragments {
                // The whole input came with the block's start (or it is empty).
                let input = match tool.input {
                    Value::Null => "{}".to_owned(),
                    input => input.to_string(),
                };
                out.push(ModelEvent::ToolCallArguments {
                    index,
                    fragment: input,
                });
            }
            out.push(ModelEvent::ToolCallEnd { index });
        }
        Ok(())
    }

    /// `message_delta`: the usage so far and why the message ended.
    fn message_delta(&mut self, data: &Value, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        if let Some(usage) = data.get("usage").filter(|u| u.is_object()) {
            out.push(ModelEvent::Usage(Usage::new(
                input_tokens(usage),
                count(usage, "output_tokens"),
            )));
        }
        if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
            out.push(ModelEvent::Finish(match reason {
                "end_turn" | "stop_sequence" => FinishReason::Stop,
                "tool_use" => FinishReason::ToolCalls,
                "max_tokens" => FinishReason::Length,
                "refusal" => FinishReason::ContentFilter,
                other => FinishReason::Other(other.to_owned()),
            }));
        }
        Ok(())
    }
}

impl EventMapper for AnthropicEvents {
    fn on_event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<Flow, ModelError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|_| {
            ModelError::Protocol(format!(
                "a Messages stream event is not JSON: {}",
                preview(&event.data, 200)
            ))
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or_default();
        match kind {
            "message_start" => self.message_start(&data, out)?,
            "content_block_start" => self.block_start(&data, out)?,
            "content_block_delta" => self.block_delta(&data, out)?,
            "content_block_stop" => self.block_stop(&data, out)?,
            "message_delta" => self.message_delta(&data, out)?,
            "message_stop" => return Ok(Flow::Done),
            "error" => return Err(self.error(&data)),
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn end_marker(&self) -> &'static str {
        "message_stop"
    }

    fn set_request_id(&mut self, request_id: Option<String>) {
        self.request_id = request_id;
    }
}
