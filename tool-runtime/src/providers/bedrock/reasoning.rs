//! Bedrock's reasoning (a model's extended thinking) in an answer: `reasoningContent` blocks,
//! whole in a Converse answer (`reasoningText` with its `text` and `signature`, or
//! `redactedContent`), or in pieces in a ConverseStream (`reasoningContent` deltas of text,
//! signature or redacted content). A model that thinks and uses tools wants its reasoning
//! back, signature and all, before its calls in the next request (V3): the blocks of a reply
//! are kept on its first call ([`crate::model::ToolCall::signature`], marked with
//! [`REASONING_SIGNATURE`]), so that a paused, journaled or moved conversation keeps them, and
//! [`sent_back`] puts them back in the assistant message.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};

use crate::model::{ModelError, ToolCall};
use crate::providers::REASONING_SIGNATURE;

/// A reasoning block that does not have the service model's shape.
fn malformed(what: &str) -> ModelError {
    ModelError::Protocol(format!("a Bedrock reasoning block is malformed: {what}"))
}

/// `value` as a string, or an error naming `field`.
fn string<'v>(value: &'v Value, field: &str) -> Result<&'v str, ModelError> {
    value
        .as_str()
        .ok_or_else(|| malformed(&format!("its `{field}` is not a string")))
}

/// Redacted content: a blob, which JSON carries in base64.
fn redacted(value: &Value) -> Result<Value, ModelError> {
    let text = string(value, "redactedContent")?;
    BASE64
        .decode(text)
        .map_err(|_| malformed("its `redactedContent` is not base64"))?;
    Ok(json!({ "redactedContent": text }))
}

/// A `reasoningText` block as Converse takes it back.
fn reasoning_text(text: &str, signature: Option<&str>) -> Value {
    let mut block = Map::new();
    block.insert("text".into(), text.into());
    if let Some(signature) = signature {
        block.insert("signature".into(), signature.into());
    }
    json!({ "reasoningText": block })
}

/// A whole `reasoningContent` block of a Converse answer, checked: exactly one of
/// `reasoningText` (a string `text`, an optional string `signature`) and `redactedContent`.
///
/// # Errors
///
/// [`ModelError::Protocol`] for any other shape.
pub(super) fn from_block(block: &Value) -> Result<Value, ModelError> {
    let block = block
        .as_object()
        .ok_or_else(|| malformed("it is not an object"))?;
    match (block.get("reasoningText"), block.get("redactedContent")) {
        (Some(reasoning), None) if block.len() == 1 => {
            let text = reasoning
                .get("text")
                .ok_or_else(|| malformed("its `reasoningText` has no `text`"))?;
            let signature = reasoning
                .get("signature")
                .map(|s| string(s, "signature"))
                .transpose()?;
            Ok(reasoning_text(string(text, "text")?, signature))
        }
        (None, Some(content)) if block.len() == 1 => redacted(content),
        _ => Err(malformed(
            "it must hold exactly one of `reasoningText` and `redactedContent`",
        )),
    }
}

/// One reasoning block of a ConverseStream, as its deltas come.
#[derive(Debug, Default)]
pub(super) struct Streaming {
    text: String,
    signature: Option<String>,
    redacted: Option<String>,
}

impl Streaming {
    /// Adds one `reasoningContent` delta: `text`, `signature` or `redactedContent`.
    ///
    /// # Errors
    ///
    /// [`ModelError::Protocol`] for a delta that is not an object, holds none of those, or
    /// holds one that is not a string.
    pub(super) fn push(&mut self, delta: &Value) -> Result<(), ModelError> {
        let delta = delta
            .as_object()
            .ok_or_else(|| malformed("a delta is not an object"))?;
        let mut known = false;
        for (field, value) in delta {
            let piece = string(value, field)?;
            let into = match field.as_str() {
                "text" => &mut self.text,
                "signature" => self.signature.get_or_insert_with(String::new),
                "redactedContent" => self.redacted.get_or_insert_with(String::new),
                _ => continue,
            };
            into.push_str(piece);
            known = true;
        }
        if known {
            Ok(())
        } else {
            Err(malformed(
                "a delta holds none of `text`, `signature` and `redactedContent`",
            ))
        }
    }

    /// The whole block, as Converse takes it back.
    ///
    /// # Errors
    ///
    /// [`ModelError::Protocol`] for a block that mixes text and redacted content, or whose
    /// redacted content is not base64.
    pub(super) fn finish(self) -> Result<Value, ModelError> {
        match self.redacted {
            None => Ok(reasoning_text(&self.text, self.signature.as_deref())),
            Some(content) if self.text.is_empty() && self.signature.is_none() => {
                redacted(&Value::String(content))
            }
            Some(_) => Err(malformed("a block mixes text and redacted content")),
        }
    }
}

/// The signature that keeps a reply's reasoning `blocks` on its first call.
pub(super) fn signature(blocks: &[Value]) -> String {
    format!("{REASONING_SIGNATURE}{}", Value::Array(blocks.to_vec()))
}

/// The `reasoningContent` blocks to send back before the calls of an assistant message: those
/// kept on its first call that carries Bedrock's reasoning. A signature of another provider's
/// (Gemini's), or one whose blocks are not objects, gives none.
pub(super) fn sent_back(calls: &[ToolCall]) -> Vec<Value> {
    let kept = calls.iter().find_map(|call| {
        call.signature
            .as_deref()
            .and_then(|s| s.strip_prefix(REASONING_SIGNATURE))
    });
    let Some(Ok(Value::Array(blocks))) = kept.map(serde_json::from_str::<Value>) else {
        return Vec::new();
    };
    if !blocks.iter().all(Value::is_object) {
        return Vec::new();
    }
    blocks
        .into_iter()
        .map(|block| json!({ "reasoningContent": block }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // V3: a streamed block is its deltas joined; a redacted one stays opaque; malformed ones
    // are protocol errors that say what is wrong, never a panic.
    #[test]
    fn v3_streamed_reasoning_blocks_are_checked() {
        let mut block = Streaming::default();
        for delta in [
            json!({"text": "The user wants "}),
            json!({"text": "a window."}),
            json!({"signature": "EqQBCkYIBxgCIkD"}),
        ] {
            assert!(block.push(&delta).is_ok());
        }
        assert_eq!(
            block.finish().ok(),
            Some(json!({"reasoningText": {"text": "The user wants a window.",
                                          "signature": "EqQBCkYIBxgCIkD"}}))
        );
        let mut block = Streaming::default();
        assert!(block.push(&json!({"redactedContent": "AAEC"})).is_ok());
        assert_eq!(
            block.finish().ok(),
            Some(json!({"redactedContent": "AAEC"}))
        );
        for bad in [json!("text"), json!({"text": 3}), json!({"other": "x"})] {
            let error = Streaming::default().push(&bad).expect_err("malformed");
            assert!(error.to_string().contains("reasoning block"), "{error}");
        }
        let mut mixed = Streaming::default();
        assert!(mixed.push(&json!({"text": "a"})).is_ok());
        assert!(mixed.push(&json!({"redactedContent": "AAEC"})).is_ok());
        assert!(mixed.finish().is_err());
        let mut not_base64 = Streaming::default();
        assert!(not_base64.push(&json!({"redactedContent": "%%"})).is_ok());
        assert!(not_base64.finish().is_err());
    }

    // V3: whole blocks have exactly one form; the blocks kept on a call come back wrapped as
    // `reasoningContent`, and another provider's signature gives none.
    #[test]
    fn v3_reasoning_is_kept_on_the_call_and_sent_back() {
        let text = json!({"reasoningText": {"text": "t", "signature": "s"}});
        assert_eq!(from_block(&text).ok(), Some(text.clone()));
        for bad in [
            json!({}),
            json!({"reasoningText": {"text": "t"}, "redactedContent": "AA=="}),
            json!({"reasoningText": {"signature": "s"}}),
            json!({"reasoningText": {"text": "t", "signature": 1}}),
            json!([1]),
        ] {
            assert!(from_block(&bad).is_err(), "{bad}");
        }
        let blocks = [text.clone(), json!({"redactedContent": "AAEC"})];
        let calls = [
            ToolCall::new("a", "t", "{}").with_signature(signature(&blocks)),
            ToolCall::new("b", "t", "{}"),
        ];
        assert_eq!(
            sent_back(&calls),
            [
                json!({"reasoningContent": text}),
                json!({"reasoningContent": {"redactedContent": "AAEC"}})
            ]
        );
        let gemini = [ToolCall::new("a", "t", "{}").with_signature("c2ln")];
        assert!(sent_back(&gemini).is_empty());
    }
}
