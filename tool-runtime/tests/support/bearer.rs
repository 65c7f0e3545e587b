//! A JSON-RPC message posted to an MCP server over streamable HTTP with a bearer token, as an
//! authorized client sends it.
// Shared by several test binaries, each through its own `mod support`.
#![allow(unreachable_pub)]

use serde_json::Value;

/// POSTs `message` to `url` with `token` in the `Authorization` header: the status and the
/// body.
pub async fn post(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    message: &Value,
) -> (u16, String) {
    let response = (client.post(url))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("Authorization", format!("Bearer {token}"))
        .body(message.to_string())
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    (status, response.text().await.expect("a body"))
}
