//! [`OpenAiChat`]: OpenAI's Chat Completions API, streamed, and the servers that speak it.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use serde_json::{Map, Value, json};
use tool_core::Tool;

use super::{Driver, OpenAiBuilder, Wire, chat_choice, count};
use crate::model::{
    ApiError, FinishReason, Message, Model, ModelError, ModelEvent, ModelRequest, ModelStream,
    SchemaUnsupported, ToolSpec, Usage,
};
use crate::providers::ConfigError;
use crate::providers::http::{parse_api_error, preview};
use crate::providers::sse::SseEvent;
use crate::providers::stream::{EventMapper, Flow, model_stream};

/// How Chat Completions takes tools.
const WIRE: Wire = Wire {
    format: "openai.chat",
    render,
    choice: chat_choice,
};

/// A model behind OpenAI's Chat Completions API (`POST {base}/chat/completions`), or behind
/// a server that speaks it (Ollama, vLLM, llama.cpp's server, LM Studio).
///
/// Requests stream with `stream_options.include_usage`; tools go in `tools` (with
/// `"strict": true` when strict), calls come back as assistant `tool_calls`, and results go
/// back as `role: tool` messages. See [the module](super) for defaults and strict mode.
///
/// ```no_run
/// use tool_runtime::providers::openai::OpenAiChat;
///
/// # fn main() -> Result<(), tool_runtime::providers::ConfigError> {
/// let openai = OpenAiChat::builder().api_key("sk-…").build()?;
/// let local = OpenAiChat::compatible("http://localhost:8000/v1").model("qwen3").build()?;
/// # let _ = (openai, local); Ok(()) }
/// ```
#[derive(Debug)]
pub struct OpenAiChat {
    driver: Driver,
}

impl OpenAiChat {
    /// A builder for OpenAI itself: an API key is required, the model defaults to
    /// [`super::DEFAULT_MODEL`], strict mode to [`super::StrictMode::Auto`].
    pub fn builder() -> OpenAiBuilder<OpenAiChat> {
        OpenAiBuilder::new(false)
    }

    /// A builder for a server that speaks OpenAI's Chat Completions API at `base_url` (such
    /// as `http://localhost:11434/v1`): the API key is optional, a model name is required,
    /// strict mode is off, and `max_output_tokens` is sent as `max_tokens`.
    pub fn compatible(base_url: impl Into<String>) -> OpenAiBuilder<OpenAiChat> {
        OpenAiBuilder::new(true).base_url(base_url)
    }

    /// The model's name, as requests send it.
    pub fn model_name(&self) -> &str {
        &self.driver.model
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        self.driver.endpoint.shown()
    }

    /// The request body for `request`.
    fn body(&self, request: &ModelRequest<'_>) -> Result<String, ModelError> {
        let options = &self.driver.options;
        let mut fields = Map::new();
        fields.insert(
            "messages".into(),
            Value::Array(messages(request.instructions, request.messages)),
        );
        if options.include_usage {
            fields.insert("stream_options".into(), json!({"include_usage": true}));
        }
        if let Some(tokens) = options.max_output_tokens {
            let key = if options.compatible {
                "max_tokens"
            } else {
                "max_completion_tokens"
            };
            fields.insert(key.into(), tokens.into());
        }
        // O2: a typed answer as `response_format` (strict where the schema allows).
        if let Some(answer) = request.answer {
            let (schema, strict) = super::answer_schema(answer);
            fields.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {
                    "name": answer.name(), "schema": schema, "strict": strict,
                }}),
            );
        }
        self.driver.request_body(request, &WIRE, fields)
    }
}

impl OpenAiBuilder<OpenAiChat> {
    /// Sets whether requests ask for usage in the stream (`stream_options.include_usage`,
    /// default yes). Turn it off for a server that rejects the option.
    pub fn include_usage(mut self, include: bool) -> Self {
        self.options.include_usage = include;
        self
    }
}

api_driver! {
    /// OpenAI takes a typed answer as `response_format` (O2); a compatible server is not
    /// assumed to, and gets the final-answer tool.
    OpenAiChat at "/chat/completions", events ChatEvents
}

/// A tool as Chat Completions takes it.
fn render(name: &str, description: &str, parameters: &Value, strict: bool) -> String {
    let mut function = Map::new();
    function.insert("name".into(), name.into());
    function.insert("description".into(), description.into());
    function.insert("parameters".into(), parameters.clone());
    if strict {
        function.insert("strict".into(), true.into());
    }
    json!({"type": "function", "function": function}).to_string()
}

/// The conversation as Chat Completions messages, the instructions first.
fn messages(instructions: Option<&str>, conversation: &[Message]) -> Vec<Value> {
    let mut out = Vec::with_capacity(conversation.len() + 1);
    if let Some(text) = instructions.filter(|t| !t.is_empty()) {
        out.push(json!({"role": "system", "content": text}));
    }
    for message in conversation {
        out.push(match message {
            Message::System { text } => json!({"role": "system", "content": text}),
            Message::User { text } => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            Message::Assistant { text, tool_calls } => {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        })
                    })
                    .collect();
                let content = if text.is_empty() {
                    Value::Null
                } else {
                    text.as_str().into()
                };
                json!({"role": "assistant", "content": content, "tool_calls": calls})
            }
            Message::Tool(result) => json!({
                "role": "tool",
                "tool_call_id": result.call_id,
                "content": tool_text(result),
            }),
        });
    }
    out
}

/// The id and model a chunk (or a response object) names.
pub(crate) fn response(object: &Value) -> ModelEvent {
    let field = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or_default();
    ModelEvent::Response {
        id: field("id").to_owned(),
        model: field("model").to_owned(),
    }
}

/// Reads Chat Completions chunks: `choices[0].delta` with `content` and `tool_calls`
/// fragments keyed by `index`, `finish_reason`, a last chunk with `usage`, then `[DONE]`.
#[derive(Debug, Default)]
pub(crate) struct ChatEvents {
    /// Each started call's index, by its id (to place fragments of servers that omit
    /// `index`).
    started: HashMap<usize, String>,
    last: Option<usize>,
    request_id: Option<String>,
    /// Whether the response's id and model were reported (every chunk repeats them).
    described: bool,
}

impl ChatEvents {
    /// The index of a `tool_calls` entry: its `index`, or for a server that omits it, a new
    /// index for a new id and the last call's otherwise.
    fn slot(&mut self, call: &Value) -> usize {
        if let Some(index) = call.get("index").and_then(Value::as_u64) {
            return usize::try_from(index).unwrap_or(usize::MAX);
        }
        let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
        match self.last {
            Some(last) if id.is_empty() || self.started.get(&last).is_some_and(|l| l == id) => last,
            _ => self.started.keys().max().map_or(0, |m| m + 1),
        }
    }
}

impl EventMapper for ChatEvents {
    fn on_event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<Flow, ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(Flow::Done);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|_| {
            ModelError::Protocol(format!(
                "a Chat Completions stream event is not JSON: {}",
                preview(data, 200)
            ))
        })?;
        if event.event.as_deref() == Some("error") || chunk.get("error").is_some() {
            let mut error: ApiError = parse_api_error(None, data.as_bytes());
            error.request_id = self.request_id.clone().or(error.request_id);
            return Err(ModelError::Api(error));
        }
        if !self.described {
            self.described = true;
            out.push(response(&chunk));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            out.push(ModelEvent::Usage(Usage::new(
                count(usage, "prompt_tokens"),
                count(usage, "completion_tokens"),
            )));
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        let Some(choice) = choices.and_then(|cs| {
            cs.iter()
                .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        }) else {
            return Ok(Flow::Continue);
        };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        for key in ["content", "refusal"] {
            if let Some(text) = delta
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                out.push(ModelEvent::TextDelta(text.to_owned()));
            }
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = self.slot(call);
            let function = call.get("function").unwrap_or(&Value::Null);
            if let Entry::Vacant(slot) = self.started.entry(index) {
                let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
                let name = function
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                slot.insert(id.to_owned());
                out.push(ModelEvent::ToolCallStart {
                    index,
                    id: id.to_owned(),
                    name: name.to_owned(),
                });
            }
            self.last = Some(index);
            if let Some(fragment) = function
                .get("arguments")
                .and_then(Value::as_str)
                .filter(|a| !a.is_empty())
            {
                out.push(ModelEvent::ToolCallArguments {
                    index,
                    fragment: fragment.to_owned(),
                });
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            out.push(ModelEvent::Finish(match reason {
                "stop" => FinishReason::Stop,
                "tool_calls" | "function_call" => FinishReason::ToolCalls,
                "length" => FinishReason::Length,
                "content_filter" => FinishReason::ContentFilter,
                other => FinishReason::Other(other.to_owned()),
            }));
        }
        Ok(Flow::Continue)
    }

    fn end_marker(&self) -> &'static str {
        "[DONE]"
    }

    fn set_request_id(&mut self, request_id: Option<String>) {
        self.request_id = request_id;
    }
}
/// The text of a tool message (O3, M4): Chat Completions takes no images, audio or resources
/// in tool results, so each is named by a line that stands in for it, and the model is told so
/// when images were left out.
fn tool_text(result: &crate::model::ToolResult) -> String {
    let mut text = result.model_text(true).into_owned();
    if result.images_to_send().next().is_some() {
        text.push_str("\n(the images are not shown: this API takes no images in tool results)");
    }
    text
}
