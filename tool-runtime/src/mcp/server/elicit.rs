//! A handler's questions over MCP (M3): [`tool_core::Context::elicit`] in a call served by an
//! [`super::McpServer`] becomes an `elicitation/create` request to the client, whose user
//! answers. Asked only where an answer can come back: the client declared elicitation, the
//! server keeps sessions, and the protocol has `elicitation/create` during a call (before
//! 2026-07-28; on 2026-07-28 the question goes back in the call's answer: `rounds`).

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema, ProtocolVersion};
use rmcp::service::{Peer, RequestContext};
use serde_json::Value;
use tool_core::CancellationToken;
use tool_core::elicit::{ElicitAnswer, ElicitError, ElicitFuture, Elicitor};

/// Asks the client of one call.
struct ClientElicitor {
    peer: Peer<RoleServer>,
    cancelled: CancellationToken,
}

impl Elicitor for ClientElicitor {
    fn elicit<'a>(&'a self, message: &'a str, schema: &'a Value) -> ElicitFuture<'a> {
        Box::pin(async move {
            let requested_schema: ElicitationSchema = serde_json::from_value(schema.clone())
                .map_err(|e| {
                    ElicitError::Failed(format!("the schema is not one MCP elicitation takes: {e}"))
                })?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: message.to_owned(),
                requested_schema,
            };
            let answer = tokio::select! {
                answer = self.peer.create_elicitation(params) => answer,
                () = self.cancelled.cancelled() => return Ok(ElicitAnswer::Cancel),
            };
            let result = answer.map_err(|e| ElicitError::Failed(e.to_string()))?;
            Ok(match result.action {
                ElicitationAction::Accept => ElicitAnswer::Accept(
                    result.content.unwrap_or(Value::Object(Default::default())),
                ),
                ElicitationAction::Decline => ElicitAnswer::Decline,
                _ => ElicitAnswer::Cancel,
            })
        })
    }
}

/// Whether `cx`'s client declared it answers form questions.
pub(super) fn can_ask(cx: &RequestContext<RoleServer>) -> bool {
    cx.client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
}

/// The elicitor of a call of `cx`'s client, when its questions can be asked and answered.
pub(super) fn for_call(
    cx: &RequestContext<RoleServer>,
    sessions: bool,
) -> Option<Arc<dyn Elicitor>> {
    let can_ask = can_ask(cx);
    let during_call = cx
        .protocol_version()
        .is_none_or(|version| version < ProtocolVersion::V_2026_07_28);
    (can_ask && sessions && during_call).then(|| {
        Arc::new(ClientElicitor {
            peer: cx.peer.clone(),
            cancelled: cx.ct.clone(),
        }) as Arc<dyn Elicitor>
    })
}
