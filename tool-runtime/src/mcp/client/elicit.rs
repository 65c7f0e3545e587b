//! A remote server's questions to this client (M3): [`McpToolsetBuilder::elicitor`] gives the
//! toolset someone to answer them; the toolset then declares the elicitation capability and
//! answers each `elicitation/create` (form mode) through it, filling in the defaults the
//! requested schema gives for what the answer leaves out (SEP-1034). Without an elicitor it
//! declares none, and a question that arrives anyway is declined.
//!
//! [`McpToolsetBuilder::elicitor`]: super::McpToolsetBuilder::elicitor

use std::sync::Arc;

use rmcp::model::{
    ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    ElicitationSchema, ErrorData, FormElicitationCapability,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Map, Value};
use tool_core::elicit::{ElicitAnswer, Elicitor};

/// The toolset's side of a session: how it introduces itself, and who answers questions.
#[derive(Clone)]
pub(crate) struct ToolsetClient {
    info: ClientConfig,
    elicitor: Option<Arc<dyn Elicitor>>,
}

impl ToolsetClient {
    /// A client introduced by `info`, answering questions through `elicitor` when given (and
    /// then declaring the form elicitation capability, as it does when `asks` says approval
    /// questions are taken: M3).
    pub(crate) fn new(
        mut info: ClientConfig,
        elicitor: Option<Arc<dyn Elicitor>>,
        asks: bool,
    ) -> Self {
        if elicitor.is_some() || asks {
            info.capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        }
        Self { info, elicitor }
    }
}

impl ClientHandler for ToolsetClient {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => Ok(answer(self.elicitor.as_deref(), &message, &requested_schema).await),
            _ => Ok(ElicitResult::new(ElicitationAction::Decline)),
        }
    }
}

/// The answer of `elicitor` to the form question `message` with `schema`, the schema's
/// defaults filled in (SEP-1034); without an elicitor, or when it fails, a decline.
pub(crate) async fn answer(
    elicitor: Option<&dyn Elicitor>,
    message: &str,
    schema: &ElicitationSchema,
) -> ElicitResult {
    let decline = ElicitResult::new(ElicitationAction::Decline);
    let (Some(elicitor), Ok(schema)) = (elicitor, serde_json::to_value(schema)) else {
        return decline;
    };
    match elicitor.elicit(message, &schema).await {
        Ok(ElicitAnswer::Accept(content)) => {
            let mut result = ElicitResult::new(ElicitationAction::Accept);
            result.content = Some(with_defaults(content, &schema));
            result
        }
        Ok(ElicitAnswer::Cancel) => ElicitResult::new(ElicitationAction::Cancel),
        Ok(ElicitAnswer::Decline) => decline,
        Err(e) => {
            tracing::warn!(error = %e, "answering a remote server's question failed; it is declined");
            decline
        }
    }
}

/// `content` with each property the schema gives a default for and the answer leaves out
/// filled in with that default (SEP-1034).
pub(crate) fn with_defaults(content: Value, schema: &Value) -> Value {
    let mut answer = match content {
        Value::Object(answer) => answer,
        Value::Null => Map::new(),
        other => return other,
    };
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if let Some(default) = property.get("default")
                && !answer.contains_key(name)
            {
                answer.insert(name.clone(), default.clone());
            }
        }
    }
    Value::Object(answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// M3, SEP-1034: what the answer leaves out takes the schema's default; what it gives
    /// stays.
    #[test]
    fn m3_defaults_fill_what_the_answer_leaves_out() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
            "note": {"type": "string"}
        }});
        let answer = with_defaults(json!({"age": 41}), &schema);
        assert_eq!(
            answer,
            json!({"name": "John Doe", "age": 41, "score": 95.5, "status": "active", "verified": true})
        );
    }
}
