//! What a provider's error body says: its message, kind, code, request id and the wait it
//! asks for, in the shapes OpenAI, Anthropic, Google and OpenAI-compatible servers use.

use std::time::Duration;

use serde_json::Value;
use tool_core::preview::preview;

use crate::model::ApiError;

/// The longest provider message kept in an error, in characters.
const MAX_MESSAGE_CHARS: usize = 2000;

/// An error as the provider described it, from its error body: OpenAI's and Anthropic's
/// `{"error": {"message", "type", "code"}}`, a bare `{"error": "…"}` or `{"message": "…"}`
/// (servers that speak OpenAI's API), or else the body's text.
pub(crate) fn parse_api_error(status: Option<u16>, body: &[u8]) -> ApiError {
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let json: Option<Value> = serde_json::from_slice(body).ok();
    let described = json.as_ref().and_then(|json| {
        let error = json.get("error").unwrap_or(json);
        let message = match error {
            Value::String(s) => Some(s.clone()),
            Value::Object(map) => map
                .get("message")
                .or_else(|| map.get("detail"))
                .and_then(text),
            _ => None,
        }?;
        let mut api = ApiError::new(status, message);
        // Google's errors name their kind in `status` (`RESOURCE_EXHAUSTED`).
        api.error_type = error
            .get("type")
            .or_else(|| error.get("status"))
            .and_then(text);
        api.retry_after = google_retry_delay(error);
        api.code = error.get("code").and_then(text);
        api.request_id = json.get("request_id").and_then(text);
        Some(api)
    });
    let mut error = described.unwrap_or_else(|| {
        let body = String::from_utf8_lossy(body);
        let message = if body.trim().is_empty() {
            status
                .and_then(|s| reqwest::StatusCode::from_u16(s).ok())
                .and_then(|s| s.canonical_reason())
                .unwrap_or("no message")
                .to_owned()
        } else {
            body.trim().to_owned()
        };
        ApiError::new(status, message)
    });
    error.message = preview(&error.message, MAX_MESSAGE_CHARS);
    error
}

/// The wait a Google error asks for in its `google.rpc.RetryInfo` detail (`"retryDelay":
/// "34s"`, a protobuf duration in seconds with up to nine decimals).
fn google_retry_delay(error: &Value) -> Option<Duration> {
    let details = error.get("details")?.as_array()?;
    let delay = details.iter().find_map(|detail| {
        let kind = detail.get("@type")?.as_str()?;
        kind.ends_with("google.rpc.RetryInfo")
            .then(|| detail.get("retryDelay")?.as_str())
            .flatten()
    })?;
    let seconds: f64 = delay.trim().strip_suffix('s')?.parse().ok()?;
    Duration::try_from_secs_f64(seconds).ok()
}

/// Whether an error says the account is out of quota: waiting will not help.
pub(super) fn is_quota(error: &ApiError) -> bool {
    [&error.code, &error.error_type]
        .iter()
        .any(|v| v.as_deref() == Some("insufficient_quota"))
}
