//! What a Converse request carries: `toolConfig` (each tool as a `toolSpec` with its schema
//! in `inputSchema.json`, and `toolChoice`), `system`, `inferenceConfig.maxTokens`, and the
//! conversation as user and assistant messages of content blocks (`text`, `toolUse`,
//! `toolResult` with `status: "error"` for a failed call, `image`, and the `reasoningContent`
//! a model that thinks wants back before its calls).

use serde_json::{Map, Value, json};

use super::{Bedrock, FORMAT, ToolChoice, reasoning};
use crate::model::{Message, ModelRequest, ToolResult};

/// A tool as `toolConfig.tools[]` takes it.
pub(super) fn render(name: &str, description: &str, schema: &Value) -> String {
    json!({"toolSpec": {
        "name": name,
        "description": description,
        "inputSchema": {"json": schema},
    }})
    .to_string()
}

/// The request body for `request`.
pub(super) fn body(driver: &Bedrock, request: &ModelRequest<'_>) -> String {
    let (system, messages) = conversation(request.instructions, request.messages);
    let mut head = Map::new();
    head.insert("messages".into(), Value::Array(messages));
    if !system.is_empty() {
        let blocks = system
            .into_iter()
            .map(|text| json!({"text": text}))
            .collect();
        head.insert("system".into(), Value::Array(blocks));
    }
    head.insert(
        "inferenceConfig".into(),
        json!({"maxTokens": driver.max_tokens}),
    );
    for (key, value) in &driver.body {
        if key != "toolConfig" {
            head.insert(key.clone(), value.clone());
        }
    }
    // Bedrock has no tool choice `none`: the tools are not advertised, unless the
    // conversation already holds tool blocks (the API then requires `toolConfig`).
    let none = matches!(request.tool_choice, Some(crate::model::ToolChoice::None));
    if request.tools.is_empty() || (none && !has_tool_blocks(&head)) {
        return Value::Object(head).to_string();
    }
    // L3: the run's choice for this request wins over the driver's.
    let choice = match request.tool_choice {
        Some(run) => from_run(run),
        None => driver.tool_choice.clone(),
    };
    let rendered: Vec<std::borrow::Cow<'_, str>> = request
        .tools
        .iter()
        .map(|spec| match spec.wire(FORMAT) {
            Some(wire) => wire.into(),
            None => render(spec.name(), spec.description(), spec.parameters()).into(),
        })
        .collect();
    with_tool_config(head, &rendered, choice.as_ref().map(tool_choice))
}

/// `head` (a JSON object that is not empty: it holds the messages) with
/// `"toolConfig": {"tools": [...], "toolChoice": ...}` appended, the tools spliced as they
/// were rendered when the agent was built, so that requests never re-serialize a schema.
fn with_tool_config(
    head: Map<String, Value>,
    tools: &[std::borrow::Cow<'_, str>],
    choice: Option<Value>,
) -> String {
    let mut body = Value::Object(head).to_string();
    body.pop(); // the closing brace
    body.push_str(",\"toolConfig\":{\"tools\":[");
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(tool);
    }
    body.push(']');
    if let Some(choice) = choice {
        body.push_str(",\"toolChoice\":");
        body.push_str(&choice.to_string());
    }
    body.push_str("}}");
    body
}

/// Whether the messages hold a `toolUse` or `toolResult` block.
fn has_tool_blocks(head: &Map<String, Value>) -> bool {
    let messages = head.get("messages").and_then(Value::as_array);
    messages.into_iter().flatten().any(|message| {
        let content = message.get("content").and_then(Value::as_array);
        content
            .into_iter()
            .flatten()
            .any(|block| block.get("toolUse").is_some() || block.get("toolResult").is_some())
    })
}

/// A run's tool choice (L3) in this API's terms: `required` is `any`; `none` cannot be said
/// (see [`body`]), and sends no choice.
fn from_run(choice: &crate::model::ToolChoice) -> Option<ToolChoice> {
    use crate::model::ToolChoice as Run;
    match choice {
        Run::Required => Some(ToolChoice::Any),
        Run::Tool(name) => Some(ToolChoice::Tool(name.clone())),
        Run::None => None,
        _ => Some(ToolChoice::Auto),
    }
}

fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({"auto": {}}),
        ToolChoice::Any => json!({"any": {}}),
        ToolChoice::Tool(name) => json!({"tool": {"name": name}}),
    }
}

/// The system blocks (the instructions, then each system message) and the messages:
/// consecutive messages of one role merged, tool results first in their user message.
fn conversation(instructions: Option<&str>, conversation: &[Message]) -> (Vec<String>, Vec<Value>) {
    let mut system: Vec<String> = instructions
        .into_iter()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in conversation {
        let (role, blocks) = match message {
            Message::System { text } => {
                if !text.is_empty() {
                    system.push(text.clone());
                }
                continue;
            }
            Message::User { text } => ("user", text_block(text).into_iter().collect()),
            Message::Assistant { text, tool_calls } => {
                // V3: the reasoning kept on the calls goes first, as Bedrock requires.
                let mut blocks = reasoning::sent_back(tool_calls);
                blocks.extend(text_block(text));
                blocks.extend(tool_calls.iter().map(|call| {
                    json!({"toolUse": {
                        "toolUseId": call.id,
                        "name": call.name,
                        "input": input_of(&call.arguments),
                    }})
                }));
                ("assistant", blocks)
            }
            Message::Tool(result) => ("user", vec![tool_result(result)]),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, content)) if *last == role => {
                if blocks[0].get("toolResult").is_some() {
                    let at = content
                        .iter()
                        .position(|b| b.get("toolResult").is_none())
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
    (system, messages)
}

/// A `toolResult` block: the text (M4: audio and resources as lines that stand for them),
/// each image as an `image` block (O3), and `status: "error"` for a failed call.
fn tool_result(result: &ToolResult) -> Value {
    let text = result.model_text(false);
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(json!({"text": text}));
    }
    for image in result.images_to_send() {
        let format = image.media_type().strip_prefix("image/").unwrap_or("png");
        content.push(json!({"image": {
            "format": format,
            "source": {"bytes": image.base64()},
        }}));
    }
    if content.is_empty() {
        // The API takes no empty result: say that it is empty.
        content.push(json!({"text": "(no output)"}));
    }
    let mut block = Map::new();
    block.insert("toolUseId".into(), (*result.call_id).into());
    block.insert("content".into(), Value::Array(content));
    if result.is_error {
        block.insert("status".into(), "error".into());
    }
    json!({"toolResult": block})
}

fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"text": text}))
}

/// A call's raw arguments as the object `toolUse.input` must be: the arguments when they
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
    use crate::model::ToolCall;

    #[test]
    fn v3_results_lead_one_user_message_and_failures_say_error() {
        let (system, messages) = conversation(
            Some("Be brief."),
            &[
                Message::user("hi"),
                Message::assistant_with_calls(
                    "",
                    vec![
                        ToolCall::new("a", "t", r#"{"x":1}"#),
                        ToolCall::new("b", "t", "nope"),
                    ],
                ),
                Message::Tool(ToolResult::new("a", "t", "one", false)),
                Message::Tool(ToolResult::new("b", "t", "bad arguments", true)),
                Message::user("and?"),
            ],
        );
        assert_eq!(system, ["Be brief."]);
        assert_eq!(messages.len(), 3);
        let last = &messages[2]["content"];
        assert_eq!(last[0]["toolResult"]["toolUseId"], "a");
        assert_eq!(last[0]["toolResult"].get("status"), None);
        assert_eq!(last[1]["toolResult"]["status"], "error");
        assert_eq!(last[2]["text"], "and?");
        assert_eq!(messages[1]["content"][1]["toolUse"]["input"], json!({}));
    }
}
