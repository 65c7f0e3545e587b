//! What a `generateContent` request carries: the function declarations, the system
//! instruction, the conversation as `user` and `model` contents of parts, the tool choice
//! and the generation settings.

use serde_json::{Map, Value, json};

use super::events::LOCAL_ID_PREFIX;
use super::{FORMAT, Gemini, ToolChoice, UNSIGNED_CALL, dialect};
use crate::model::{Message, ModelError, ModelRequest, ToolCall, ToolResult, ToolSpec};
use crate::providers::{REASONING_SIGNATURE, RequestError};
use tool_core::Image;

/// A function declaration as the API takes it, its schema as `parametersJsonSchema`.
pub(super) fn render(name: &str, description: &str, schema: &Value) -> String {
    json!({"name": name, "description": description, "parametersJsonSchema": schema}).to_string()
}

/// The request body for `request`.
///
/// # Errors
///
/// [`RequestError::UnknownToolChoice`] (as [`ModelError::Other`]) for a tool choice that
/// names a function the request does not declare.
pub(super) fn body(driver: &Gemini, request: &ModelRequest<'_>) -> Result<String, ModelError> {
    let (system, contents) = conversation(
        request.instructions,
        request.messages,
        driver.media_in_results,
    );
    let mut head = Map::new();
    head.insert("contents".into(), Value::Array(contents));
    if !system.is_empty() {
        head.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system}]}),
        );
    }
    // L3: the run's choice for this request wins over the driver's.
    let run_choice = request.tool_choice.map(from_run);
    let choice = run_choice.as_ref().or(driver.tool_choice.as_ref());
    if !request.tools.is_empty()
        && let Some(choice) = choice
    {
        check_choice(choice, request.tools)?;
        head.insert("toolConfig".into(), tool_config(choice));
    }
    let mut generation = Map::new();
    if let Some(tokens) = driver.max_output_tokens {
        generation.insert("maxOutputTokens".into(), tokens.into());
    }
    // O2: a typed answer as a JSON answer that fits the schema, in Gemini's dialect.
    if let Some(answer) = request.answer {
        let schema = dialect::rewrite(answer.schema())
            .map_or_else(|_| answer.schema().clone(), |rewritten| rewritten.schema);
        generation.insert("responseMimeType".into(), "application/json".into());
        generation.insert("responseJsonSchema".into(), schema);
    }
    if !generation.is_empty() {
        head.insert("generationConfig".into(), Value::Object(generation));
    }
    for (key, value) in &driver.body {
        merge_field(&mut head, key, value);
    }
    let declarations: Vec<String> = request
        .tools
        .iter()
        .map(|spec| match spec.wire(FORMAT) {
            Some(wire) => wire.to_owned(),
            None => render(spec.name(), spec.description(), spec.parameters()),
        })
        .collect();
    if declarations.is_empty() {
        head.remove("tools");
        return Ok(Value::Object(head).to_string());
    }
    let tool = format!("{{\"functionDeclarations\":[{}]}}", declarations.join(","));
    Ok(crate::providers::with_tools(&head, &[&tool]))
}

/// A field set with `body_field`: objects (`generationConfig`, `toolConfig`) are merged
/// into the driver's, the field's keys winning; anything else replaces it.
fn merge_field(head: &mut Map<String, Value>, key: &str, value: &Value) {
    match (head.get_mut(key), value) {
        (Some(Value::Object(ours)), Value::Object(theirs)) => {
            for (k, v) in theirs {
                ours.insert(k.clone(), v.clone());
            }
        }
        _ => {
            head.insert(key.to_owned(), value.clone());
        }
    }
}

/// A run's tool choice (L3) in this API's terms: `required` is `ANY`, one tool is `ANY`
/// limited to its name.
fn from_run(choice: &crate::model::ToolChoice) -> ToolChoice {
    use crate::model::ToolChoice as Run;
    match choice {
        Run::Required => ToolChoice::Any,
        Run::None => ToolChoice::None,
        Run::Tool(name) => ToolChoice::Only(vec![name.clone()]),
        _ => ToolChoice::Auto,
    }
}

/// Every function a choice names must be declared in the request.
fn check_choice(choice: &ToolChoice, tools: &[ToolSpec]) -> Result<(), ModelError> {
    if let ToolChoice::Only(names) = choice
        && let Some(name) = names
            .iter()
            .find(|name| !tools.iter().any(|spec| spec.name() == name.as_str()))
    {
        return Err(ModelError::Other(Box::new(
            RequestError::UnknownToolChoice { name: name.clone() },
        )));
    }
    Ok(())
}

/// `toolConfig` for a choice.
fn tool_config(choice: &ToolChoice) -> Value {
    let config = match choice {
        ToolChoice::Auto => json!({"mode": "AUTO"}),
        ToolChoice::Any => json!({"mode": "ANY"}),
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Only(names) => json!({"mode": "ANY", "allowedFunctionNames": names}),
    };
    json!({ "functionCallingConfig": config })
}

/// The system instruction (the instructions, then each system message, blank-line
/// separated) and the contents: consecutive messages of one role merged into one content,
/// so that the results of one turn's calls go back together. With `media`, a result's
/// images and documents go as `functionResponse.parts` ([`response_part`]).
fn conversation(
    instructions: Option<&str>,
    conversation: &[Message],
    media: bool,
) -> (String, Vec<Value>) {
    let mut system: Vec<&str> = instructions.into_iter().filter(|s| !s.is_empty()).collect();
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in conversation {
        let (role, parts) = match message {
            Message::System { text } => {
                system.push(text);
                continue;
            }
            Message::User { text } => ("user", text_part(text).into_iter().collect()),
            Message::Assistant { text, tool_calls } => {
                let mut parts: Vec<Value> = text_part(text).into_iter().collect();
                parts.extend(call_parts(tool_calls));
                ("model", parts)
            }
            Message::Tool(result) => ("user", vec![response_part(result, media)]),
        };
        if parts.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, content)) if *last == role => content.extend(parts),
            _ => turns.push((role, parts)),
        }
    }
    let contents = turns
        .into_iter()
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect();
    (system.join("\n\n"), contents)
}

fn text_part(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({ "text": text }))
}

/// The `functionCall` parts of one turn, each with the signature the model gave it; a turn
/// none of whose calls carries one gets [`UNSIGNED_CALL`] on its first call.
fn call_parts(calls: &[ToolCall]) -> Vec<Value> {
    let none_kept = calls.iter().all(|call| signature_of(call).is_none());
    calls
        .iter()
        .enumerate()
        .map(|(at, call)| {
            let mut function = Map::new();
            if let Some(id) = sent_id(&call.id) {
                function.insert("id".into(), id.into());
            }
            function.insert("name".into(), (*call.name).into());
            function.insert("args".into(), args_of(&call.arguments));
            let mut part = Map::new();
            part.insert("functionCall".into(), Value::Object(function));
            let signature = match signature_of(call) {
                Some(signature) => Some(signature),
                None => (none_kept && at == 0).then_some(UNSIGNED_CALL),
            };
            if let Some(signature) = signature {
                part.insert("thoughtSignature".into(), signature.into());
            }
            Value::Object(part)
        })
        .collect()
}

/// The media types a function response takes as `parts` (Google's list for multimodal
/// function responses): these go as `inlineData`, anything else as a line of the text.
pub(super) const MEDIA_IN_RESULTS: &[&str] =
    &["image/png", "image/jpeg", "image/webp", "application/pdf"];

/// A result as a `functionResponse` part: `{"output": text}`, or `{"error": text}` for a
/// failure. With `media` (O3, V3), each image or document of a type in [`MEDIA_IN_RESULTS`]
/// goes in the response's `parts` as `inlineData` (base64), in order; anything else (audio,
/// other types, resources, and every image without `media`) goes as a line of the text that
/// stands for it (M4).
fn response_part(result: &ToolResult, media: bool) -> Value {
    let key = if result.is_error { "error" } else { "output" };
    let mut response = Map::new();
    if let Some(id) = sent_id(&result.call_id) {
        response.insert("id".into(), id.into());
    }
    response.insert("name".into(), (*result.name).into());
    let (sent, kept): (Vec<&Image>, Vec<&Image>) = result
        .images
        .iter()
        .partition(|image| media && MEDIA_IN_RESULTS.contains(&image.media_type()));
    let text = if sent.is_empty() {
        result.model_text(true).into_owned()
    } else {
        // The stand-ins name only what is not sent as a part.
        let rest = ToolResult {
            images: kept.into_iter().cloned().collect(),
            ..result.clone()
        };
        rest.model_text(true).into_owned()
    };
    response.insert("response".into(), json!({ key: text }));
    if !sent.is_empty() {
        let parts: Vec<Value> = sent
            .iter()
            .map(|image| {
                json!({"inlineData": {"mimeType": image.media_type(), "data": image.base64()}})
            })
            .collect();
        response.insert("parts".into(), Value::Array(parts));
    }
    json!({ "functionResponse": response })
}

/// A call's signature if it is Gemini's: another provider's (Bedrock's reasoning) is not.
fn signature_of(call: &ToolCall) -> Option<&str> {
    call.signature
        .as_deref()
        .filter(|s| !s.starts_with(REASONING_SIGNATURE))
}

/// A call id as sent: the model's own, never one the driver made up.
fn sent_id(id: &str) -> Option<&str> {
    (!id.is_empty() && !id.starts_with(LOCAL_ID_PREFIX)).then_some(id)
}

/// A call's raw arguments as the object `functionCall.args` must be: the arguments when
/// they are a JSON object, else `{}` (the call's result already told the model what was
/// wrong).
fn args_of(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => Value::Object(Map::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // V3: the results of one turn's calls go back in one user content, in order, with the
    // call ids the model gave (never the driver's own); a turn without kept signatures
    // gets the documented stand-in on its first call only.
    #[test]
    fn v3_results_of_a_turn_go_back_together() {
        let local = format!("{LOCAL_ID_PREFIX}1-1");
        let (system, contents) = conversation(
            Some("Be brief."),
            &[
                Message::system("Use metric units."),
                Message::user("hi"),
                Message::assistant_with_calls(
                    "",
                    vec![
                        ToolCall::new("a", "t", r#"{"x":1}"#),
                        ToolCall::new(local.as_str(), "t", "not json"),
                    ],
                ),
                Message::Tool(ToolResult::new("a", "t", "one", false)),
                Message::Tool(ToolResult::new(local.as_str(), "t", "failed", true)),
            ],
            true,
        );
        assert_eq!(system, "Be brief.\n\nUse metric units.");
        assert_eq!(contents.len(), 3);
        let calls = &contents[1]["parts"];
        assert_eq!(calls[0]["thoughtSignature"], UNSIGNED_CALL);
        assert_eq!(calls[1].get("thoughtSignature"), None);
        assert_eq!(calls[1]["functionCall"], json!({"name": "t", "args": {}}));
        assert_eq!(
            contents[2],
            json!({"role": "user", "parts": [
                {"functionResponse": {"id": "a", "name": "t", "response": {"output": "one"}}},
                {"functionResponse": {"name": "t", "response": {"error": "failed"}}},
            ]})
        );
        let (_, contents) = conversation(
            None,
            &[Message::assistant_with_calls(
                "",
                vec![
                    ToolCall::new("b", "t", "{}"),
                    ToolCall::new("a", "t", "{}").with_signature("c2ln"),
                ],
            )],
            true,
        );
        let calls = &contents[0]["parts"];
        assert_eq!(calls[0].get("thoughtSignature"), None);
        assert_eq!(calls[1]["thoughtSignature"], "c2ln");
        // Bedrock's reasoning kept on a call is not a Gemini signature.
        let bedrock = format!("{REASONING_SIGNATURE}[]");
        let (_, contents) = conversation(
            None,
            &[Message::assistant_with_calls(
                "",
                vec![ToolCall::new("b", "t", "{}").with_signature(bedrock)],
            )],
            true,
        );
        assert_eq!(contents[0]["parts"][0]["thoughtSignature"], UNSIGNED_CALL);
    }

    // O3, V3: images and documents of the types Google lists go as the function response's
    // `inlineData` parts, in order; audio stays a line of the text; without `media` (the
    // fallback of the models before Gemini 3) every image is a line of the text.
    #[test]
    fn o3_media_go_as_function_response_parts() {
        let result = ToolResult::new("a", "t", "The chart.", false).with_images(vec![
            Image::png(vec![1, 2]),
            Image::wav(vec![3]),
            Image::new("application/pdf", vec![4]),
            Image::new("image/gif", vec![5]),
        ]);
        let part = response_part(&result, true);
        assert_eq!(
            part["functionResponse"]["parts"],
            json!([
                {"inlineData": {"mimeType": "image/png", "data": "AQI="}},
                {"inlineData": {"mimeType": "application/pdf", "data": "BA=="}},
            ])
        );
        assert_eq!(
            part["functionResponse"]["response"]["output"],
            "The chart.\n[audio: audio/wav, 1 bytes]\n[image: image/gif, 1 bytes]"
        );
        let part = response_part(&result, false);
        assert_eq!(part["functionResponse"].get("parts"), None);
        let text = part["functionResponse"]["response"]["output"]
            .as_str()
            .unwrap_or_default();
        assert!(text.contains("[image: image/png, 2 bytes]"), "{text}");
        assert!(text.contains("[file: application/pdf, 1 bytes]"), "{text}");
    }

    #[test]
    fn tool_configs() {
        assert_eq!(
            tool_config(&ToolChoice::Only(vec!["t".into()])),
            json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["t"]}})
        );
        assert_eq!(
            tool_config(&ToolChoice::None),
            json!({"functionCallingConfig": {"mode": "NONE"}})
        );
    }
}
