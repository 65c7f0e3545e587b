//! A remote server's questions during a call, asked in its answer (`input_required`, protocol
//! 2026-07-28, M3): each answered, and the call made again with the answers and the server's
//! `requestState`.
//!
//! An approval question (a form with no fields) of a call that was approved here
//! ([`Context::is_approved`]) is accepted: the person already decided. Otherwise, with
//! [`McpToolsetBuilder::pause_on_approval`](super::McpToolsetBuilder::pause_on_approval), it
//! makes the local call wait for approval (H2) instead; any other question goes to the
//! toolset's elicitor, or is declined.

use std::sync::Arc;

use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest, InputRequiredResult,
    InputResponses,
};
use serde_json::Value;
use tool_core::elicit::Elicitor;
use tool_core::{BoxError, Context, Relayed};

use super::elicit;
use super::error::RemoteCallError;

/// Who answers a server's questions during calls.
#[derive(Clone, Default)]
pub(crate) struct Answering {
    /// The application's elicitor, if it gave one.
    pub(crate) elicitor: Option<Arc<dyn Elicitor>>,
    /// Whether an approval question pauses the local run.
    pub(crate) pause_on_approval: bool,
}

/// At most this many rounds of questions in one call: a server that asks forever is refused.
pub(crate) const MAX_ROUNDS: usize = 8;

impl Answering {
    /// The answers to the questions of `input`, asked during the call of `tool` with `args`.
    ///
    /// # Errors
    ///
    /// A [`Relayed`] awaiting approval when an approval question pauses the call; an
    /// unsupported request (sampling, roots).
    pub(crate) async fn answers(
        &self,
        ctx: &Context,
        tool: &str,
        args: &Value,
        input: &InputRequiredResult,
    ) -> Result<InputResponses, BoxError> {
        let mut responses = InputResponses::new();
        for (key, request) in input.input_requests.iter().flatten() {
            let InputRequest::Elicitation(question) = request else {
                return Err(RemoteCallError::Unsupported {
                    tool: tool.to_owned(),
                    what: "a request for sampling or the client's roots",
                }
                .into());
            };
            let answer = self.answer(ctx, args, &question.params).await?;
            let answer = serde_json::to_value(answer).map_err(|e| RemoteCallError::Transport {
                tool: tool.to_owned(),
                source: Box::new(e),
            })?;
            responses.insert(key.clone(), answer);
        }
        Ok(responses)
    }

    async fn answer(
        &self,
        ctx: &Context,
        args: &Value,
        question: &ElicitRequestParams,
    ) -> Result<ElicitResult, BoxError> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = question
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        // A question with nothing to fill in asks for a yes or a no: an approval.
        let approval = requested_schema.properties.is_empty();
        if approval && ctx.is_approved() {
            let mut accepted = ElicitResult::new(ElicitationAction::Accept);
            accepted.content = Some(Value::Object(serde_json::Map::new()));
            return Ok(accepted);
        }
        if approval && self.pause_on_approval {
            return Err(Relayed::awaiting_approval(message.clone(), args.clone()).into());
        }
        Ok(elicit::answer(self.elicitor.as_deref(), message, requested_schema).await)
    }
}
