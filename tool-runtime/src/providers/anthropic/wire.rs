//! What a Messages request carries: the tools, the system prompt and the conversation as
//! user and assistant messages of content blocks.

use serde_json::{Map, Value, json};

use super::{Anthropic, FORMAT, ToolChoice};
use crate::model::{Message, ModelRequest, ToolResult};

/// The API's own tool search (Q1), sent beside tools marked `defer_loading`: the model
/// searches them in natural language, ranked by BM25.
const TOOL_SEARCH: &str =
    r#"{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}"#;

/// A tool as the Messages API takes it, with its examples as `input_examples` (Q3).
pub(super) fn render(name: &str, description: &str, schema: &Value, examples: &[Value]) -> String {
    let mut tool = json!({"name": name, "description": description, "input_schema": schema});
    with_examples(&mut tool, examples);
    tool.to_string()
}

/// A strict tool (V4): its schema already in the strict dialect, and `"strict": true`.
pub(super) fn render_strict(
    name: &str,
    description: &str,
    schema: &Value,
    examples: &[Value],
) -> String {
    let mut tool =
        json!({"name": name, "description": description, "input_schema": schema, "strict": true});
    with_examples(&mut tool, examples);
    tool.to_string()
}

/// Adds `input_examples` (Q3) when there are any.
fn with_examples(tool: &mut Value, examples: &[Value]) {
    if let (false, Some(object)) = (examples.is_empty(), tool.as_object_mut()) {
        object.insert("input_examples".into(), Value::Array(examples.to_vec()));
    }
}

/// The tool `wire` (a rendered JSON object) marked `"defer_loading": true` (Q1).
fn deferred(wire: &str) -> String {
    match wire.strip_suffix('}') {
        Some(open) => format!("{open},\"defer_loading\":true}}"),
        None => wire.to_owned(),
    }
}

/// The tools of `request` as the API takes them, and whether they need the advanced tool
/// use beta: some carry examples, or some are deferred (then the tool search goes last).
fn tools(request: &ModelRequest<'_>) -> (Vec<String>, bool) {
    let mut any_deferred = false;
    let mut tools: Vec<String> = (request.tools.iter())
        .map(|spec| {
            let wire = match spec.wire(FORMAT) {
                Some(wire) => wire.to_owned(),
                None => render(spec.name(), spec.description(), spec.parameters(), &[]),
            };
            if spec.defers_loading() {
                any_deferred = true;
                deferred(&wire)
            } else {
                wire
            }
        })
        .collect();
    let examples = tools.iter().any(|t| t.contains("\"input_examples\":"));
    if any_deferred {
        tools.push(TOOL_SEARCH.to_owned());
    }
    (tools, any_deferred || examples)
}

/// The request body for `request`, and whether it needs the advanced tool use beta header.
pub(super) fn body(driver: &Anthropic, request: &ModelRequest<'_>) -> (String, bool) {
    let (tools, advanced) = tools(request);
    let (system, messages) = conversation(request.instructions, request.messages);
    let mut head = Map::new();
    head.insert("model".into(), driver.model.clone().into());
    head.insert("max_tokens".into(), driver.max_tokens.into());
    if !system.is_empty() {
        head.insert("system".into(), system.into());
    }
    head.insert("messages".into(), Value::Array(messages));
    head.insert("stream".into(), true.into());
    // L3: the run's choice for this request wins over the driver's.
    let run_choice = request.tool_choice.map(from_run);
    let choice = run_choice.as_ref().or(driver.tool_choice.as_ref());
    if !tools.is_empty()
        && let Some(choice) = tool_choice(choice, driver.parallel_tool_calls)
    {
        head.insert("tool_choice".into(), choice);
    }
    for (key, value) in &driver.body {
        head.insert(key.clone(), value.clone());
    }
    let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
    (crate::providers::with_tools(&head, &tools), advanced)
}

/// A run's tool choice (L3) in this API's terms: `required` is `any`.
fn from_run(choice: &crate::model::ToolChoice) -> ToolChoice {
    use crate::model::ToolChoice as Run;
    match choice {
        Run::Required => ToolChoice::Any,
        Run::None => ToolChoice::None,
        Run::Tool(name) => ToolChoice::Tool(name.clone()),
        _ => ToolChoice::Auto,
    }
}

/// `tool_choice`, with `disable_parallel_tool_use` when parallel calls are off.
fn tool_choice(choice: Option<&ToolChoice>, parallel: Option<bool>) -> Option<Value> {
    if choice.is_none() && parallel.is_none() {
        return None;
    }
    let mut out = match choice.unwrap_or(&ToolChoice::Auto) {
        ToolChoice::Auto => json!({"type": "auto"}),
        ToolChoice::Any => json!({"type": "any"}),
        ToolChoice::None => json!({"type": "none"}),
        ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
    };
    if let (Some(parallel), Some(obj)) = (parallel, out.as_object_mut())
        && obj.get("type").and_then(Value::as_str) != Some("none")
    {
        obj.insert("disable_parallel_tool_use".into(), (!parallel).into());
    }
    Some(out)
}

/// The system prompt (the instructions, then each system message, blank-line separated)
/// and the messages: consecutive messages of one role merged, tool results first in their
/// user message.
fn conversation(instructions: Option<&str>, conversation: &[Message]) -> (String, Vec<Value>) {
    let mut system: Vec<&str> = instructions.into_iter().filter(|s| !s.is_empty()).collect();
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in conversation {
        let (role, blocks) = match message {
            Message::System { text } => {
                system.push(text);
                continue;
            }
            Message::User { text } => ("user", text_block(text).into_iter().collect()),
            Message::Assistant { text, tool_calls } => {
                let mut blocks: Vec<Value> = text_block(text).into_iter().collect();
                blocks.extend(tool_calls.iter().map(|call| {
                    json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": input_of(&call.arguments),
                    })
                }));
                ("assistant", blocks)
            }
            Message::Tool(result) => ("user", vec![tool_result_block(result)]),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, content)) if *last == role => {
                if is_tool_result(&blocks) {
                    // Tool results lead their user message.
                    let at = content
                        .iter()
                        .position(|b| !is_tool_result(std::slice::from_ref(b)))
                        .unwrap_or(content.len());
                    content.splice(at..at, blocks);
                } else {
                    content.extend(blocks);
                }
            }
            _ => turns.push((role, blocks)),
        }
    }
    let messages = turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    (system.join("\n\n"), messages)
}

/// A tool result as a `tool_result` block: its text, and its images as content blocks (O3).
fn tool_result_block(result: &ToolResult) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), "tool_result".into());
    block.insert("tool_use_id".into(), (*result.call_id).into());
    // M4: audio and resources as lines of the text that stand for them.
    let text = result.model_text(false);
    if result.images_to_send().next().is_none() {
        if !text.is_empty() {
            block.insert("content".into(), text.into_owned().into());
        }
    } else {
        // O3: the text and each image as content blocks of the tool result.
        let mut content = Vec::with_capacity(result.images.len() + 1);
        if !text.is_empty() {
            content.push(json!({"type": "text", "text": text}));
        }
        content.extend(result.images_to_send().map(|image| {
            json!({
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": image.media_type(),
                    "data": image.base64(),
                },
            })
        }));
        block.insert("content".into(), Value::Array(content));
    }
    if result.is_error {
        block.insert("is_error".into(), true.into());
    }
    Value::Object(block)
}

fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

fn is_tool_result(blocks: &[Value]) -> bool {
    blocks
        .first()
        .and_then(|b| b.get("type"))
        .and_then(Value::as_str)
        == Some("tool_result")
}

/// A call's raw arguments as the object `tool_use.input` must be: the arguments when they
/// are a JSON object, else `{}` (the call's result already told the model what was wrong).
fn input_of(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => Value::Object(Map::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ToolCall, ToolResult};

    #[test]
    fn tool_results_lead_one_merged_user_message() {
        let (system, messages) = conversation(
            Some("Be brief."),
            &[
                Message::system("Use metric units."),
                Message::user("hi"),
                Message::assistant_with_calls(
                    "",
                    vec![
                        ToolCall::new("a", "t", r#"{"x":1}"#),
                        ToolCall::new("b", "t", "not json"),
                    ],
                ),
                Message::Tool(ToolResult::new("a", "t", "one", false)),
                Message::Tool(ToolResult::new("b", "t", "the tool failed", true)),
                Message::user("and?"),
            ],
        );
        assert_eq!(system, "Be brief.\n\nUse metric units.");
        assert_eq!(messages.len(), 3);
        let last = &messages[2]["content"];
        assert_eq!(last[0]["tool_use_id"], "a");
        assert_eq!(last[1]["is_error"], true);
        assert_eq!(last[2]["text"], "and?");
        assert_eq!(messages[1]["content"][1]["input"], json!({}));
    }

    #[test]
    fn tool_choice_carries_parallel_off() {
        assert_eq!(tool_choice(None, None), None);
        assert_eq!(
            tool_choice(None, Some(false)),
            Some(json!({"type": "auto", "disable_parallel_tool_use": true}))
        );
        assert_eq!(
            tool_choice(Some(&ToolChoice::Tool("t".into())), None),
            Some(json!({"type": "tool", "name": "t"}))
        );
    }
}
