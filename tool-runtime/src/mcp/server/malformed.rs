//! The answer to a request rmcp could not parse: a hostile or broken client gets a
//! JSON-RPC error that says what was wrong, and the server goes on serving.
//!
//! rmcp reads each client request into a typed enum whose last variant, `CustomRequest`, takes
//! any method and params. A `tools/call` whose params do not fit `CallToolRequestParams` (no
//! `name`, `arguments` that is a string or an array) therefore arrives as a custom request,
//! and rmcp's default answer to those is `-32601 Method not found`, naming the method: wrong
//! for a method the server serves. Here a `tools/call` with malformed params gets JSON-RPC's
//! `-32602 Invalid params`, saying which field is wrong, as does a `subscriptions/listen`
//! (2026-07-28) whose `notifications` is not a filter; any other method still gets `-32601`,
//! quoting only a short piece of its name (S3). (`tools/list` needs nothing here: rmcp reads
//! malformed params of it as none.)

use rmcp::ErrorData;
use rmcp::model::ErrorCode;
use serde_json::Value;
use tool_core::violation::preview_str;

use crate::mcp::meta::json_kind;

/// The JSON-RPC error answering `method` with `params`, a request rmcp could not read as any
/// request it knows.
pub(crate) fn custom_request_error(method: &str, params: Option<&Value>) -> ErrorData {
    match method {
        "tools/call" => ErrorData::invalid_params(tools_call_problem(params), None),
        "subscriptions/listen" => ErrorData::invalid_params(
            "subscriptions/listen: `notifications` must be an object of the notifications \
             asked for (`toolsListChanged`, `promptsListChanged`, `resourcesListChanged`: \
             booleans; `resourceSubscriptions`: an array of URIs)",
            None,
        ),
        other => ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {}", preview_str(other)),
            None,
        ),
    }
}

/// What is wrong with the params of a `tools/call`, in words.
fn tools_call_problem(params: Option<&Value>) -> String {
    let Some(Value::Object(params)) = params else {
        return "tools/call: `params` must be an object with `name` (a string) and optionally \
                `arguments` (an object)"
            .to_owned();
    };
    match params.get("name") {
        None => return "tools/call: `name` is missing: the tool's name, a string".to_owned(),
        Some(Value::String(_)) => {}
        Some(other) => {
            return format!(
                "tools/call: `name` must be a string, not {}",
                json_kind(other)
            );
        }
    }
    for (field, want) in [("arguments", "an object"), ("requestState", "a string")] {
        // `null` reads as absent.
        if let Some(value) = params.get(field)
            && !value.is_null()
            && json_kind(value) != want
        {
            return format!(
                "tools/call: `{field}` must be {want}, not {}",
                json_kind(value)
            );
        }
    }
    // Something else breaks the schema of `tools/call` (`inputResponses`, say); serde's
    // message would quote the value, so say only that.
    "tools/call: `params` does not match the schema of tools/call".to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn problem(params: Value) -> String {
        custom_request_error("tools/call", Some(&params))
            .message
            .into_owned()
    }

    #[test]
    fn each_malformed_tools_call_says_what_is_wrong() {
        assert_eq!(
            custom_request_error("tools/call", None).code,
            ErrorCode::INVALID_PARAMS
        );
        assert!(problem(json!([1])).contains("`params` must be an object"));
        assert!(problem(json!({})).contains("`name` is missing"));
        assert!(problem(json!({"name": null})).ends_with("not null"));
        assert!(problem(json!({"name": "t", "arguments": "{}"})).ends_with("not a string"));
        assert!(problem(json!({"name": "t", "arguments": [1]})).ends_with("not an array"));
        assert!(problem(json!({"name": "t", "arguments": true})).ends_with("not a boolean"));
        assert!(problem(json!({"name": "t", "requestState": 5})).ends_with("not a number"));
        assert!(problem(json!({"name": "t", "inputResponses": 5})).contains("does not match"));
    }

    #[test]
    fn a_malformed_listen_is_invalid_params() {
        let error =
            custom_request_error("subscriptions/listen", Some(&json!({"notifications": 5})));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(error.message.contains("`notifications` must be an object"));
    }

    #[test]
    fn an_unknown_method_is_not_found_and_quoted_short() {
        let long = "x".repeat(10_000);
        let error = custom_request_error(&long, None);
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
        assert!(error.message.len() < 200, "{}", error.message);
    }
}
