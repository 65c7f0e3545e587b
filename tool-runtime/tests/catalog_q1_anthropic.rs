//! The Anthropic driver's tool search and examples against a local server (Q1, Q3): deferred
//! tools go with `"defer_loading": true` beside the API's BM25 tool search tool, and the
//! `anthropic-beta` header; a `tool_search_tool_result` block loads what it references, and
//! only what the run offers; examples go as `input_examples`.

#![cfg(feature = "anthropic")]

mod support {
    pub mod catalog;
    pub mod provider;
}

use std::sync::atomic::Ordering;
use support::catalog::deferred;

use serde_json::{Value, json};
use support::provider::{Reply, Server, anthropic_answer};
use tool_runtime::providers::RetryPolicy;
use tool_runtime::providers::anthropic::{ADVANCED_TOOL_USE_BETA, Anthropic};
use tool_runtime::{Agent, Context, OutcomeKind, Tool};

type Args = std::collections::BTreeMap<String, Value>;

fn claude(server: &Server) -> Anthropic {
    Anthropic::builder()
        .api_key("sk-ant-test-key")
        .base_url(server.url())
        .model("claude-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration")
}

/// A Messages stream: the API's tool search referencing `found`, then `tool_use` blocks
/// calling each of `calls`.
fn searched_then_calls(found: &[&str], calls: &[&str]) -> String {
    let references: Vec<Value> = found
        .iter()
        .map(|name| json!({"type": "tool_reference", "tool_name": name}))
        .collect();
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "content": [], "usage": {"input_tokens": 40, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {
            "type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25",
            "input": {"query": "weather"}}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
            "content": {"type": "tool_search_tool_search_result", "tool_references": references}}}),
        json!({"type": "content_block_stop", "index": 1}),
    ];
    for (n, name) in calls.iter().enumerate() {
        let index = n + 2;
        events.push(
            json!({"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": format!("toolu_{n}"), "name": name, "input": {}}}),
        );
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
        "usage": {"output_tokens": 9}}),
    );
    events.push(json!({"type": "message_stop"}));
    events
        .iter()
        .map(|e| {
            format!(
                "event: {}\ndata: {e}\n\n",
                e["type"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

#[tokio::test]
async fn q1_anthropic_requests_carry_defer_loading_and_the_tool_search_tool() {
    let server = Server::start([
        Reply::sse(searched_then_calls(
            &["get-weather", "weather-admin"],
            &["get-weather", "weather-admin"],
        )),
        Reply::sse(anthropic_answer("sunny")),
    ])
    .await;
    let (weather, runs) = deferred("get-weather", "The get-weather tool.", true);
    let (hidden, hidden_runs) = deferred("weather-admin", "The weather-admin tool.", false);
    let clock = Tool::builder("clock", "Tells the time.")
        .handler(|_ctx: Context, _args: Args| async { Ok::<_, std::convert::Infallible>("noon") })
        .build();
    let agent = Agent::builder(claude(&server))
        .tool(clock)
        .tool(weather)
        .tool(hidden)
        .build()
        .unwrap();
    let out = agent.run(&Context::new(), "weather?").await.unwrap();
    assert_eq!(out.text, "sunny");
    assert_eq!(out.calls[0].kind(), OutcomeKind::Success);
    assert_eq!(
        out.calls[1].kind(),
        OutcomeKind::Unavailable,
        "a hidden tool stays hidden"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(hidden_runs.load(Ordering::SeqCst), 0);

    let requests = server.requests();
    assert_eq!(
        requests[0].header("anthropic-beta"),
        Some(ADVANCED_TOOL_USE_BETA)
    );
    let first = requests[0].json();
    let tools = first["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 3, "the hidden tool is never sent: {tools:?}");
    assert_eq!(tools[0]["name"], "clock");
    assert_eq!(tools[0].get("defer_loading"), None);
    assert_eq!(tools[1]["name"], "get-weather");
    assert_eq!(tools[1]["defer_loading"], true);
    assert_eq!(
        tools[2],
        json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    // Once loaded, the tool goes plainly, and nothing is deferred any more.
    let second = requests[1].json();
    let tools = second["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[1]["name"], "get-weather");
    assert_eq!(tools[1].get("defer_loading"), None);
    assert_eq!(requests[1].header("anthropic-beta"), None);
}

#[tokio::test]
async fn q3_anthropic_tools_carry_their_examples_as_input_examples() {
    let server = Server::start([Reply::sse(anthropic_answer("ok"))]).await;
    let schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    });
    let weather = Tool::builder("get-weather", "Finds the weather.")
        .examples([json!({"city": "Paris"})])
        .dynamic_handler(
            schema,
            |_: &Value, _: &mut _| {},
            |_ctx: Context, _args: Value| async { Ok::<_, std::convert::Infallible>("sunny") },
        )
        .build();
    assert!(weather.declaration_error().is_none());
    let agent = Agent::builder(claude(&server))
        .tool(weather)
        .build()
        .unwrap();
    agent.run(&Context::new(), "weather?").await.unwrap();
    let requests = server.requests();
    assert_eq!(
        requests[0].header("anthropic-beta"),
        Some(ADVANCED_TOOL_USE_BETA)
    );
    let tool = &requests[0].json()["tools"][0];
    assert_eq!(tool["input_examples"], json!([{"city": "Paris"}]));
}
