//! Reading a `streamGenerateContent?alt=sse` stream: each event is a whole
//! `GenerateContentResponse` holding the next parts of the first candidate (text, or a
//! function call whole in one part), the usage so far, and, in the last one, the
//! `finishReason`. An event `{"error": …}` is an error; thought parts are not passed on.
//!
//! The stream has no end marker of its own: the reply is complete at the event that holds a
//! `finishReason` (or a `promptFeedback.blockReason`).

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use crate::model::{ApiError, FinishReason, ModelError, ModelEvent, Usage};
use crate::providers::http::preview;
use crate::providers::sse::SseEvent;
use crate::providers::stream::{EventMapper, Flow};

/// The prefix of the ids this driver gives calls that came without one. Such ids are not
/// sent back to the API.
pub(super) const LOCAL_ID_PREFIX: &str = "gemini-call-";

/// A new call id, unique in the process.
fn local_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!(
        "{LOCAL_ID_PREFIX}{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The mapper of one reply.
#[derive(Debug)]
pub(crate) struct GeminiEvents {
    calls: usize,
    request_id: Option<String>,
    responded: bool,
}

impl GeminiEvents {
    pub(super) fn new() -> Self {
        Self {
            calls: 0,
            request_id: None,
            responded: false,
        }
    }

    /// An error event of the stream (Google's `{"error": {"code", "message", "status"}}`).
    fn error(&self, error: &Value) -> ModelError {
        let text = |k: &str| match error.get(k) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let mut api = ApiError::new(
            None,
            text("message").unwrap_or_else(|| "the stream failed".to_owned()),
        );
        api.error_type = text("status");
        api.code = text("code");
        api.request_id = self.request_id.clone();
        ModelError::Api(api)
    }

    /// A reply the API stopped for a reason that is not an answer: blocked by a filter, or
    /// a function call it could not read. Named in the error, with Google's own message.
    fn stopped(&self, reason: &str, message: Option<&str>) -> ModelError {
        let why = match reason {
            "SAFETY" | "IMAGE_SAFETY" => "it was blocked by Gemini's safety filters",
            "RECITATION" | "IMAGE_RECITATION" => "it recited protected content",
            "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_PROHIBITED_CONTENT" => {
                "it was blocked as prohibited content"
            }
            "MALFORMED_FUNCTION_CALL" => "the model wrote a function call the API could not read",
            "UNEXPECTED_TOOL_CALL" => "the model called a tool it was not offered",
            "TOO_MANY_TOOL_CALLS" => "the model made too many tool calls",
            "LANGUAGE" => "it was in a language the model does not support",
            _ => "the API stopped it",
        };
        let mut text = format!("Gemini stopped the reply with finishReason {reason}: {why}");
        if let Some(message) = message.filter(|m| !m.trim().is_empty()) {
            text.push_str(" (");
            text.push_str(&preview(message.trim(), 500));
            text.push(')');
        }
        let mut api = ApiError::new(None, text);
        api.code = Some(reason.to_owned());
        api.request_id = self.request_id.clone();
        ModelError::Api(api)
    }

    /// The parts of the first candidate: text deltas and whole function calls.
    fn parts(&mut self, parts: &[Value], out: &mut Vec<ModelEvent>) {
        for part in parts {
            if part.get("thought").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            if let Some(call) = part.get("functionCall") {
                self.call(call, part.get("thoughtSignature"), out);
            } else if let Some(text) = part.get("text").and_then(Value::as_str)
                && !text.is_empty()
            {
                out.push(ModelEvent::TextDelta(text.to_owned()));
            }
        }
    }

    /// One function call, whole: its start, its arguments as JSON text, its end.
    fn call(&mut self, call: &Value, signature: Option<&Value>, out: &mut Vec<ModelEvent>) {
        let index = self.calls;
        self.calls += 1;
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map_or_else(local_id, str::to_owned);
        let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
        let arguments = match call.get("args") {
            None | Some(Value::Null) => "{}".to_owned(),
            Some(args) => args.to_string(),
        };
        out.push(ModelEvent::ToolCallStart {
            index,
            id,
            name: name.to_owned(),
        });
        if let Some(signature) = signature.and_then(Value::as_str) {
            out.push(ModelEvent::ToolCallSignature {
                index,
                signature: signature.to_owned(),
            });
        }
        out.push(ModelEvent::ToolCallArguments {
            index,
            fragment: arguments,
        });
        out.push(ModelEvent::ToolCallEnd { index });
    }

    /// One `GenerateContentResponse`.
    fn response(&mut self, data: &Value, out: &mut Vec<ModelEvent>) -> Result<Flow, ModelError> {
        if !self.responded {
            let field = |k: &str| data.get(k).and_then(Value::as_str).unwrap_or_default();
            if !field("responseId").is_empty() || !field("modelVersion").is_empty() {
                self.responded = true;
                out.push(ModelEvent::Response {
                    id: field("responseId").to_owned(),
                    model: field("modelVersion").to_owned(),
                });
            }
        }
        if let Some(usage) = data.get("usageMetadata") {
            out.push(ModelEvent::Usage(usage_of(usage)));
        }
        let candidate = data.pointer("/candidates/0");
        if let Some(parts) = candidate
            .and_then(|c| c.pointer("/content/parts"))
            .and_then(Value::as_array)
        {
            self.parts(parts, out);
        }
        if let Some(reason) = candidate
            .and_then(|c| c.get("finishReason"))
            .and_then(Value::as_str)
        {
            let message = candidate
                .and_then(|c| c.get("finishMessage"))
                .and_then(Value::as_str);
            return self.finish(reason, message, out);
        }
        if let Some(reason) = data
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
        {
            let text = format!("Gemini blocked the prompt (blockReason {reason})");
            return Err(self.stopped(reason, Some(&text)));
        }
        Ok(Flow::Continue)
    }

    fn finish(
        &self,
        reason: &str,
        message: Option<&str>,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Flow, ModelError> {
        let finish = match reason {
            "STOP" if self.calls > 0 => FinishReason::ToolCalls,
            "STOP" => FinishReason::Stop,
            "MAX_TOKENS" => FinishReason::Length,
            "FINISH_REASON_UNSPECIFIED" | "OTHER" => FinishReason::Other(reason.to_owned()),
            other => return Err(self.stopped(other, message)),
        };
        out.push(ModelEvent::Finish(finish));
        Ok(Flow::Done)
    }
}

/// Tokens read (the prompt, cached or not, and the tools' prompt) and written (the answer
/// and the thoughts, which are billed as output).
fn usage_of(usage: &Value) -> Usage {
    let count = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
    Usage::new(
        count("promptTokenCount").saturating_add(count("toolUsePromptTokenCount")),
        count("candidatesTokenCount").saturating_add(count("thoughtsTokenCount")),
    )
}

impl EventMapper for GeminiEvents {
    fn on_event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<Flow, ModelError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|_| {
            ModelError::Protocol(format!(
                "a Gemini stream event is not JSON: {}",
                preview(&event.data, 200)
            ))
        })?;
        if !data.is_object() {
            return Err(ModelError::Protocol(format!(
                "a Gemini stream event is not a JSON object: {}",
                preview(&event.data, 200)
            )));
        }
        if let Some(error) = data.get("error") {
            return Err(self.error(error));
        }
        self.response(&data, out)
    }

    fn end_marker(&self) -> &'static str {
        "finishReason"
    }

    fn set_request_id(&mut self, request_id: Option<String>) {
        self.request_id = request_id;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(events: &mut GeminiEvents, data: &str) -> (Vec<ModelEvent>, Result<Flow, ModelError>) {
        let mut out = Vec::new();
        let event = SseEvent {
            data: data.to_owned(),
            ..SseEvent::default()
        };
        let flow = events.on_event(event, &mut out);
        (out, flow)
    }

    // V3: a function call without an id gets one of the driver's, its signature goes on
    // the call, and STOP after calls is the finish of a tool-call turn.
    #[test]
    fn v3_calls_get_ids_and_their_signatures() {
        let mut events = GeminiEvents::new();
        let (out, flow) = feed(
            &mut events,
            r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":1}},"thoughtSignature":"c2ln"},{"functionCall":{"id":"given","name":"g"}}]},"finishReason":"STOP"}]}"#,
        );
        assert!(matches!(flow, Ok(Flow::Done)));
        let ModelEvent::ToolCallStart { id, .. } = &out[0] else {
            panic!("a call start: {out:?}");
        };
        assert!(id.starts_with(LOCAL_ID_PREFIX));
        assert_eq!(
            out[1],
            ModelEvent::ToolCallSignature {
                index: 0,
                signature: "c2ln".into()
            }
        );
        let out: Vec<ModelEvent> = out
            .into_iter()
            .filter(|e| !matches!(e, ModelEvent::ToolCallSignature { .. }))
            .collect();
        assert_eq!(
            out[1],
            ModelEvent::ToolCallArguments {
                index: 0,
                fragment: r#"{"a":1}"#.into()
            }
        );
        assert!(matches!(&out[3], ModelEvent::ToolCallStart { id, index: 1, .. } if id == "given"));
        assert_eq!(
            out[4],
            ModelEvent::ToolCallArguments {
                index: 1,
                fragment: "{}".into()
            }
        );
        assert_eq!(
            out.last(),
            Some(&ModelEvent::Finish(FinishReason::ToolCalls))
        );
    }

    // V3: a SAFETY stop is an error that names the reason; garbage is a protocol error.
    #[test]
    fn v3_a_safety_stop_and_garbage_are_errors() {
        let mut events = GeminiEvents::new();
        let (_, flow) = feed(
            &mut events,
            r#"{"candidates":[{"finishReason":"SAFETY","index":0}]}"#,
        );
        let Err(ModelError::Api(api)) = flow else {
            panic!("an API error: {flow:?}");
        };
        assert_eq!(api.code.as_deref(), Some("SAFETY"));
        assert!(api.message.contains("safety filters"), "{}", api.message);
        let (_, flow) = feed(&mut events, "[1,2]");
        assert!(matches!(flow, Err(ModelError::Protocol(_))));
        let (_, flow) = feed(&mut events, "<html>");
        assert!(matches!(flow, Err(ModelError::Protocol(_))));
    }
}
