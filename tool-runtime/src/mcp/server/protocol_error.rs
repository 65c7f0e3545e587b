//! [`ProtocolError`]: a handler's way to end its call over MCP with a JSON-RPC error instead
//! of a result (M9), and how the server finds it in a call's outcome.

use std::borrow::Cow;

use rmcp::ErrorData;
use rmcp::model::ErrorCode;
use serde_json::Value;
use tool_core::Outcome;
use tool_core::error::find_in_chain;

/// Ends a call served over MCP with a JSON-RPC error (`code`, `message`, `data`) instead of a
/// result (M9). A handler returns it as its error (`Err(ProtocolError::invalid_params(…))`)
/// when the request itself is wrong in a way the protocol has a code for, rather than the tool
/// failing at its work (which is a result with `isError`, as [`ToolError`](crate::ToolError)
/// gives).
///
/// Over MCP the client receives the error as the answer to its `tools/call`, and a call
/// running as a task ends the task `failed` with this error inlined. The message and data are
/// sent to the client as they are: say nothing in them that the client may not read. In an
/// agent run it is an ordinary failure of the handler: the model reads only that the tool
/// failed.
///
/// ```
/// use tool_runtime::mcp::ProtocolError;
///
/// let refused = ProtocolError::invalid_params("`region` names no region this server serves");
/// assert_eq!(refused.code(), -32602);
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ProtocolError {
    code: i32,
    message: Cow<'static, str>,
    data: Option<Value>,
}

impl ProtocolError {
    /// A JSON-RPC error of `code` saying `message`. The codes from -32768 to -32000 are the
    /// protocol's: use one for what it means (-32602 invalid params, -32603 internal error),
    /// and a code outside that range for an error of the application's own.
    pub fn new(code: i32, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `-32602 Invalid params`, saying `message`.
    pub fn invalid_params(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS.0, message)
    }

    /// `-32603 Internal error`, saying `message`.
    pub fn internal_error(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR.0, message)
    }

    /// The error with `data` (any JSON) sent beside its message.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i32 {
        self.code
    }

    /// The message sent to the client.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The data sent beside the message, if any.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_ref()
    }
}

/// The JSON-RPC error a call's handler ended it with, if it returned a [`ProtocolError`]
/// (anywhere in its error's chain).
pub(crate) fn of_outcome(outcome: &Outcome) -> Option<ErrorData> {
    let error: &(dyn std::error::Error + 'static) = outcome.error()?;
    let protocol = find_in_chain::<ProtocolError>(error)?;
    Some(ErrorData::new(
        ErrorCode(protocol.code),
        protocol.message.clone(),
        protocol.data.clone(),
    ))
}
