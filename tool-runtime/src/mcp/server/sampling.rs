//! A handler's sampling requests over MCP (M8): [`tool_core::Context::sample`] in a call served
//! by an [`super::McpServer`] becomes a `sampling/createMessage` request to the client, whose
//! model answers. Asked during the call only where an answer can come back: the client
//! declared sampling, the server keeps sessions, and the protocol is before 2026-07-28 (on
//! 2026-07-28 the request goes back in the call's answer: `rounds`). Elsewhere the handler is
//! told the client cannot sample.
//!
//! The answer is taken only as one text block of the assistant, at most
//! [`tool_core::sampling::MAX_ANSWER_BYTES`] long; anything else is a clear error.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ProtocolVersion, Role, SamplingMessage,
    SamplingMessageContentBlock,
};
use rmcp::service::{Peer, RequestContext, ServiceError};
use serde::Deserialize as _;
use serde_json::Value;
use tool_core::CancellationToken;
use tool_core::sampling::{
    SampleError, SampleFuture, Sampler, SamplingAnswer, SamplingRequest, SamplingRole,
};

/// The request `request` as MCP's `sampling/createMessage` carries it.
pub(super) fn params_of(request: &SamplingRequest) -> CreateMessageRequestParams {
    let messages = (request.messages.iter())
        .map(|message| {
            let role = match message.role {
                SamplingRole::User => Role::User,
                SamplingRole::Assistant => Role::Assistant,
            };
            SamplingMessage::new(role, SamplingMessageContentBlock::text(&message.text))
        })
        .collect();
    let mut params = CreateMessageRequestParams::new(messages, request.max_tokens);
    params.system_prompt = request.system_prompt.clone();
    params.temperature = request.temperature;
    if !request.stop_sequences.is_empty() {
        params.stop_sequences = Some(request.stop_sequences.clone());
    }
    params
}

/// The handler's answer from the client's `CreateMessageResult`: one text block of the
/// assistant, at most the size a handler is given.
pub(super) fn answer_of(result: CreateMessageResult) -> Result<SamplingAnswer, SampleError> {
    if result.message.role != Role::Assistant {
        return Err(SampleError::Invalid(
            "the answer's role is not `assistant`".into(),
        ));
    }
    let mut texts = result.message.content.iter();
    let text = match (texts.next(), texts.next()) {
        (Some(SamplingMessageContentBlock::Text(text)), None) => text.text.clone(),
        (Some(_), None) => {
            return Err(SampleError::Invalid(
                "the answer is not text (image, audio or a tool use)".into(),
            ));
        }
        _ => {
            return Err(SampleError::Invalid(
                "the answer is not exactly one content block".into(),
            ));
        }
    };
    SamplingAnswer {
        text,
        model: tool_core::violation::preview_str(&result.model),
        stop_reason: result
            .stop_reason
            .map(|reason| tool_core::violation::preview_str(&reason)),
    }
    .check()
}

/// The handler's answer from a client's answer as JSON (an input response on 2026-07-28).
pub(super) fn answer_of_value(answer: &Value) -> Result<SamplingAnswer, SampleError> {
    if let Some(text) = (answer.pointer("/content/text")).and_then(Value::as_str)
        && text.len() > tool_core::sampling::MAX_ANSWER_BYTES
    {
        return Err(SampleError::TooLarge {
            limit: tool_core::sampling::MAX_ANSWER_BYTES,
        });
    }
    let result = CreateMessageResult::deserialize(answer).map_err(|e| {
        SampleError::Invalid(format!(
            "it is not a sampling answer: {}",
            tool_core::violation::preview_str(&e.to_string())
        ))
    })?;
    answer_of(result)
}

/// Asks the client of one call.
struct ClientSampler {
    peer: Peer<RoleServer>,
    cancelled: CancellationToken,
}

impl Sampler for ClientSampler {
    fn sample<'a>(
        &'a self,
        _key: Option<&'a str>,
        request: &'a SamplingRequest,
    ) -> SampleFuture<'a> {
        Box::pin(async move {
            let answer = tokio::select! {
                answer = self.peer.create_message(params_of(request)) => answer,
                () = self.cancelled.cancelled() => return Err(SampleError::Cancelled),
            };
            match answer {
                Ok(result) => answer_of(result),
                Err(ServiceError::McpError(error)) => Err(SampleError::Refused(
                    tool_core::violation::preview_str(&error.message),
                )),
                Err(ServiceError::UnexpectedResponse) => Err(SampleError::Invalid(
                    "the client answered with something other than a sampling answer".into(),
                )),
                Err(error) => Err(SampleError::Failed(error.to_string())),
            }
        })
    }
}

/// Whether `cx`'s client declared it can sample.
pub(super) fn can_sample(cx: &RequestContext<RoleServer>) -> bool {
    cx.client_capabilities()
        .is_some_and(|capabilities| capabilities.sampling.is_some())
}

/// The sampler of a call of `cx`'s client, when its requests can be asked during the call.
pub(super) fn for_call(
    cx: &RequestContext<RoleServer>,
    sessions: bool,
) -> Option<Arc<dyn Sampler>> {
    let during_call = cx
        .protocol_version()
        .is_none_or(|version| version < ProtocolVersion::V_2026_07_28);
    (can_sample(cx) && sessions && during_call).then(|| {
        Arc::new(ClientSampler {
            peer: cx.peer.clone(),
            cancelled: cx.ct.clone(),
        }) as Arc<dyn Sampler>
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn m8_hostile_sampling_answers_are_clear_errors() {
        let cases = [
            json!({"role": "assistant", "content": {"type": "text", "text": "hi"}}),
            json!({"role": "user", "content": {"type": "text", "text": "hi"}, "model": "m"}),
            json!({"role": "assistant", "content": {"type": "image", "data": "AA==",
                   "mimeType": "image/png"}, "model": "m"}),
            json!({"role": "assistant", "content": [], "model": "m"}),
            json!(12),
            json!({"role": "assistant", "content": {"type": "text",
                   "text": "x".repeat(tool_core::sampling::MAX_ANSWER_BYTES + 1)}, "model": "m"}),
        ];
        for case in &cases {
            let answer = answer_of_value(case);
            assert!(
                matches!(
                    answer,
                    Err(SampleError::Invalid(_) | SampleError::TooLarge { .. })
                ),
                "{answer:?}"
            );
        }
        let good = json!({"role": "assistant", "content": {"type": "text", "text": "Paris"},
                          "model": "m", "stopReason": "endTurn"});
        let answer = answer_of_value(&good).expect("a text answer");
        assert_eq!(answer.text, "Paris");
        assert_eq!(answer.stop_reason.as_deref(), Some("endTurn"));
    }
}
