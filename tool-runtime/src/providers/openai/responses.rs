//! [`OpenAiResponses`]: OpenAI's Responses API, streamed.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};
use tool_core::Tool;

use super::{Driver, OpenAiBuilder, Wire, count, responses_choice};
use crate::model::{
    ApiError, FinishReason, Message, Model, ModelError, ModelEvent, ModelRequest, ModelStream,
    SchemaUnsupported, ToolSpec, Usage,
};
use crate::providers::ConfigError;
use crate::providers::http::preview;
use crate::providers::sse::SseEvent;
use crate::providers::stream::{EventMapper, Flow, model_stream};

/// How Responses takes tools.
const WIRE: Wire = Wire {
    format: "openai.responses",
    render,
    choice: responses_choice,
};

/// A model behind OpenAI's Responses API (`POST {base}/responses`).
///
/// The agent's instructions go in `instructions`, the conversation in `input` as messages,
/// `function_call` items and their `function_call_output` items; tools are function tools
/// with an explicit `strict` (the API's default is strict). Requests stream, and are not
/// stored by OpenAI unless [`OpenAiBuilder::store`] says so: every request carries the
/// whole conversation. See [the module](super) for defaults and strict mode.
#[derive(Debug)]
pub struct OpenAiResponses {
    driver: Driver,
}

impl OpenAiResponses {
    /// A builder: an API key is required, the model defaults to [`super::DEFAULT_MODEL`],
    /// strict mode to [`super::StrictMode::Auto`].
    pub fn builder() -> OpenAiBuilder<OpenAiResponses> {
        OpenAiBuilder::new(false)
    }

    /// A builder for a server that speaks OpenAI's Responses API at `base_url` (such as
    /// llama.cpp's server at `http://localhost:8080/v1`): the API key is optional, a model
    /// name is required, strict mode is off, and a named tool choice is sent as `"required"`
    /// over that tool alone (see [`super::ToolChoice::Tool`]).
    pub fn compatible(base_url: impl Into<String>) -> OpenAiBuilder<OpenAiResponses> {
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
        if let Some(text) = request.instructions.filter(|t| !t.is_empty()) {
            fields.insert("instructions".into(), text.into());
        }
        fields.insert("input".into(), Value::Array(input(request.messages)));
        if let Some(store) = options.store {
            fields.insert("store".into(), store.into());
        }
        if let Some(tokens) = options.max_output_tokens {
            fields.insert("max_output_tokens".into(), tokens.into());
        }
        // O2: a typed answer as `text.format` (strict where the schema allows).
        if let Some(answer) = request.answer {
            let (schema, strict) = super::answer_schema(answer);
            fields.insert(
                "text".into(),
                json!({"format": {
                    "type": "json_schema", "name": answer.name(), "schema": schema,
                    "strict": strict,
                }}),
            );
        }
        self.driver.request_body(request, &WIRE, fields)
    }
}

impl OpenAiBuilder<OpenAiResponses> {
    /// Sets `store`: whether OpenAI keeps the responses (default: `false`, sent
    /// explicitly).
    pub fn store(mut self, store: bool) -> Self {
        self.options.store = Some(store);
        self
    }

    /// Sends a run's deferred tools (Q1) to Responses' own tool search (default: `false`,
    /// the agent's local search tool instead): each deferred function marked
    /// `"defer_loading": true` beside a `{"type": "tool_search"}` tool, which the provider
    /// runs; the functions its `tool_search_output` items return are loaded, those the run
    /// offers only, and sent plainly from then on. Only the provider's newer models take
    /// the tool search: turn it on for those.
    pub fn tool_search(mut self, on: bool) -> Self {
        self.options.tool_search = on;
        self
    }
}

api_driver! {
    /// OpenAI takes a typed answer as `text.format` (O2); a compatible server is not
    /// assumed to, and gets the final-answer tool.
    OpenAiResponses at "/responses", events ResponsesEvents
}

/// A tool as Responses takes it: `strict` always explicit, since its default is `true`.
fn render(name: &str, description: &str, parameters: &Value, strict: bool) -> String {
    json!({
        "type": "function",
        "name": name,
        "description": description,
        "parameters": parameters,
        "strict": strict,
    })
    .to_string()
}

/// The conversation as Responses input items.
fn input(conversation: &[Message]) -> Vec<Value> {
    let mut out = Vec::with_capacity(conversation.len());
    for message in conversation {
        match message {
            Message::System { text } => {
                out.push(json!({"type": "message", "role": "system", "content": text}));
            }
            Message::User { text } => {
                out.push(json!({"type": "message", "role": "user", "content": text}));
            }
            Message::Assistant { text, tool_calls } => {
                if !text.is_empty() || tool_calls.is_empty() {
                    out.push(json!({"type": "message", "role": "assistant", "content": text}));
                }
                for call in tool_calls {
                    out.push(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.arguments,
                    }));
                }
            }
            // M4: audio and resources as lines of the text that stand for them.
            Message::Tool(result) if result.images_to_send().next().is_none() => out.push(json!({
                "type": "function_call_output",
                "call_id": result.call_id,
                "output": result.model_text(false),
            })),
            // O3: the output as a list of input content: the text, then each image as a data
            // URL.
            Message::Tool(result) => {
                let text = result.model_text(false);
                let mut output = vec![json!({"type": "input_text", "text": text})];
                output.extend(result.images_to_send().map(|image| {
                    json!({
                        "type": "input_image",
                        "image_url": format!(
                            "data:{};base64,{}",
                            image.media_type(),
                            image.base64()
                        ),
                    })
                }));
                out.push(json!({
                    "type": "function_call_output",
                    "call_id": result.call_id,
                    "output": output,
                }));
            }
        }
    }
    out
}

/// Reads Responses events: `response.output_item.added` starts a call,
/// `response.function_call_arguments.delta` carries its fragments,
/// `response.output_text.delta` the text, and `response.completed` (or
/// `response.incomplete`) ends the reply with usage; `error` and `response.failed` are
/// errors.
///
/// A call's events are tied to it by `output_index`, which OpenAI always sends. A server
/// that omits it (llama.cpp's) is read by `item_id` instead: the call's item `id`, or its
/// `call_id` where the item has no `id`.
#[derive(Debug, Default)]
pub(crate) struct ResponsesEvents {
    /// The argument text sent so far, per started call (by `output_index`, or by order of
    /// start where the server sends none).
    arguments: HashMap<usize, String>,
    /// Each started call's index, by the item `id` and the `call_id` it started with.
    by_id: HashMap<String, usize>,
    ended: HashSet<usize>,
    request_id: Option<String>,
}

impl ResponsesEvents {
    /// The index of the call `event` is about: its `output_index`, else the started call
    /// whose item `id` or `call_id` is the event's `item_id` or its item's `id` or `call_id`.
    fn locate(&self, event: &Value) -> Option<usize> {
        if let Some(index) = index_of(event) {
            return Some(index);
        }
        let item = event.get("item");
        [
            event.get("item_id"),
            item.and_then(|i| i.get("id")),
            item.and_then(|i| i.get("call_id")),
        ]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find_map(|id| self.by_id.get(id).copied())
    }

    /// Starts the call of a `function_call` item: at the event's `output_index`, else after
    /// every call started so far.
    fn start(&mut self, event: &Value, item: &Value, out: &mut Vec<ModelEvent>) {
        let index = index_of(event)
            .unwrap_or_else(|| self.arguments.keys().max().map_or(0, |last| last + 1));
        let field = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or_default();
        for id in [field("id"), field("call_id")] {
            if !id.is_empty() {
                self.by_id.insert(id.to_owned(), index);
            }
        }
        out.push(ModelEvent::ToolCallStart {
            index,
            id: field("call_id").to_owned(),
            name: field("name").to_owned(),
        });
        self.arguments.insert(index, String::new());
        self.complete(index, item.get("arguments").and_then(Value::as_str), out);
    }

    /// Sends what `full` (a call's complete arguments) holds beyond what was streamed.
    fn complete(&mut self, index: usize, full: Option<&str>, out: &mut Vec<ModelEvent>) {
        let (Some(full), Some(sent)) = (full, self.arguments.get_mut(&index)) else {
            return;
        };
        if self.ended.contains(&index) {
            return;
        }
        if let Some(rest) = full.strip_prefix(sent.as_str()).filter(|r| !r.is_empty()) {
            out.push(ModelEvent::ToolCallArguments {
                index,
                fragment: rest.to_owned(),
            });
            sent.push_str(rest);
        }
    }

    /// `response.output_item.done`: a function call's end (with whatever of its arguments
    /// was not streamed), or the tools the provider's own tool search loaded (Q1).
    fn item_done(&mut self, data: &Value, out: &mut Vec<ModelEvent>) {
        let item = data.get("item").unwrap_or(&Value::Null);
        if item.get("type").and_then(Value::as_str) == Some("tool_search_output") {
            out.push(ModelEvent::ToolsLoaded {
                names: loaded_tools(item.get("tools")),
            });
            return;
        }
        if let Some(index) = self.locate(data).filter(|i| self.arguments.contains_key(i)) {
            self.complete(index, item.get("arguments").and_then(Value::as_str), out);
            if self.ended.insert(index) {
                out.push(ModelEvent::ToolCallEnd { index });
            }
        }
    }

    /// `response.completed` or `response.incomplete`: the response's id and model, its
    /// usage, and why it stopped.
    fn completed(&self, response: &Value, out: &mut Vec<ModelEvent>) {
        out.push(super::chat::response(response));
        out.extend(usage(response));
        let reason = response
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str);
        out.push(ModelEvent::Finish(match reason {
            Some("max_output_tokens") => FinishReason::Length,
            Some("content_filter") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_owned()),
            None if self.arguments.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        }));
    }

    fn error(&self, error: &Value, status: Option<u16>) -> ModelError {
        let text = |k: &str| error.get(k).and_then(Value::as_str).map(str::to_owned);
        let mut api = ApiError::new(
            status,
            text("message").unwrap_or_else(|| "the response failed".to_owned()),
        );
        api.code = text("code");
        api.error_type = text("type").filter(|t| t != "error");
        api.request_id = self.request_id.clone();
        ModelError::Api(api)
    }
}

/// The names of the functions in a `tool_search_output` item's `tools`, and of the functions
/// of a namespace there (the driver sends none, but a search may group what it returns).
fn loaded_tools(tools: Option<&Value>) -> Vec<String> {
    fn listed(tools: Option<&Value>) -> impl Iterator<Item = &Value> {
        tools.and_then(Value::as_array).into_iter().flatten()
    }
    let kind = |tool: &Value| tool.get("type").and_then(Value::as_str).map(str::to_owned);
    let mut functions = Vec::new();
    for tool in listed(tools) {
        match kind(tool).as_deref() {
            Some("function") => functions.push(tool),
            Some("namespace") => functions.extend(
                listed(tool.get("tools")).filter(|t| kind(t).as_deref() == Some("function")),
            ),
            _ => {}
        }
    }
    (functions.into_iter())
        .filter_map(|tool| tool.get("name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

fn index_of(event: &Value) -> Option<usize> {
    event
        .get("output_index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
}

fn usage(response: &Value) -> Option<ModelEvent> {
    let usage = response.get("usage").filter(|u| u.is_object())?;
    Some(ModelEvent::Usage(Usage::new(
        count(usage, "input_tokens"),
        count(usage, "output_tokens"),
    )))
}

impl EventMapper for ResponsesEvents {
    fn on_event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<Flow, ModelError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|_| {
            ModelError::Protocol(format!(
                "a Responses stream event is not JSON: {}",
                preview(&event.data, 200)
            ))
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or_default();
        let text = |key: &str| data.get(key).and_then(Value::as_str);
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(delta) = text("delta").filter(|d| !d.is_empty()) {
                    out.push(ModelEvent::TextDelta(delta.to_owned()));
                }
            }
            "response.output_item.added" => {
                let item = data.get("item").unwrap_or(&Value::Null);
                if item.get("type").and_then(Value::as_str) == Some("function_call") {
                    self.start(&data, item, out);
                }
            }

            "response.function_call_arguments.delta" => {
                let Some(delta) = text("delta").filter(|d| !d.is_empty()) else {
                    return Ok(Flow::Continue);
                };
                let started = self
                    .locate(&data)
                    .and_then(|i| Some(i).zip(self.arguments.get_mut(&i)));
                let Some((index, sent)) = started else {
                    // Dropping it would silently change the call's arguments.
                    return Err(ModelError::Protocol(format!(
                        "a Responses argument delta belongs to no function call that started \
                         (output_index {}, item_id {:?})",
                        data.get("output_index").unwrap_or(&Value::Null),
                        text("item_id")
                            .map(|id| preview(id, 64))
                            .unwrap_or_default()
                    )));
                };
                if !self.ended.contains(&index) {
                    sent.push_str(delta);
                    out.push(ModelEvent::ToolCallArguments {
                        index,
                        fragment: delta.to_owned(),
                    });
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(index) = self.locate(&data) {
                    self.complete(index, text("arguments"), out);
                }
            }
            "response.output_item.done" => self.item_done(&data, out),
            "response.completed" | "response.incomplete" => {
                self.completed(data.get("response").unwrap_or(&Value::Null), out);
                return Ok(Flow::Done);
            }
            "response.failed" => {
                let response = data.get("response").unwrap_or(&Value::Null);
                let error = response.get("error").unwrap_or(&Value::Null);
                return Err(self.error(error, None));
            }
            "error" => return Err(self.error(data.get("error").unwrap_or(&data), None)),
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn end_marker(&self) -> &'static str {
        "response.completed"
    }

    fn set_request_id(&mut self, request_id: Option<String>) {
        self.request_id = request_id;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q1_a_tool_search_output_of_any_shape_loads_only_the_functions_it_names() {
        let tools = json!([
            {"type": "function", "name": "get-weather"},
            {"type": "namespace", "name": "crm", "tools": [
                {"type": "function", "name": "find-customer"},
                {"type": "namespace", "name": "deeper", "tools": [{"type": "function", "name": "x"}]},
                {"type": "function", "name": 7},
            ]},
            {"type": "web_search", "name": "hosted"},
            {"name": "no-type"},
            "not an object",
            {"type": "namespace", "tools": "not a list"},
        ]);
        assert_eq!(loaded_tools(Some(&tools)), ["get-weather", "find-customer"]);
        assert!(loaded_tools(Some(&json!({"tools": 1}))).is_empty());
        assert!(loaded_tools(None).is_empty());
    }
}
