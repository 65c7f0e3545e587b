//! The Responses driver's own tool search against a local server (Q1): with
//! `OpenAiBuilder::tool_search`, deferred functions go marked `"defer_loading": true` beside a
//! `{"type": "tool_search"}` tool; a `tool_search_output` item (the provider's hosted search,
//! in the shape of its SDK's `ResponseToolSearchOutputItem`) loads the functions it returns,
//! and only those the run offers; without the option the local search tool is used.

#![cfg(feature = "openai")]

mod support {
    pub mod catalog;
    pub mod provider;
}

use std::sync::atomic::Ordering;
use support::catalog::deferred;

use serde_json::{Value, json};
use support::provider::{Reply, Server, responses_answer};
use tool_runtime::providers::RetryPolicy;
use tool_runtime::providers::openai::OpenAiResponses;
use tool_runtime::{Agent, Context, OutcomeKind, SEARCH_TOOL, Tool};

type Args = std::collections::BTreeMap<String, Value>;

fn responses(server: &Server, tool_search: bool) -> OpenAiResponses {
    OpenAiResponses::builder()
        .api_key("sk-test-key")
        .base_url(server.url())
        .model("gpt-test")
        .retry(RetryPolicy::none())
        .tool_search(tool_search)
        .build()
        .expect("a valid configuration")
}

/// A function tool as the provider's search returns it.
fn function(name: &str) -> Value {
    json!({"type": "function", "name": name, "description": "found",
        "parameters": {"type": "object", "properties": {}}, "strict": false,
        "defer_loading": true})
}

/// A Responses stream: the hosted tool search returning `found` (one as a namespace's
/// member), then a `function_call` of each of `calls`.
fn searched_then_calls(found: &[&str], calls: &[&str]) -> String {
    let (first, rest) = found.split_first().expect("something found");
    let mut tools = vec![function(first)];
    if !rest.is_empty() {
        let members: Vec<Value> = rest.iter().map(|name| function(name)).collect();
        tools.push(
            json!({"type": "namespace", "name": "more", "description": "More.",
            "tools": members}),
        );
    }
    let search_call = json!({"id": "tsc_1", "type": "tool_search_call", "execution": "server",
        "call_id": null, "status": "completed", "arguments": {"query": "weather"}});
    let search_output = json!({"id": "tso_1", "type": "tool_search_output",
        "execution": "server", "call_id": null, "status": "completed", "tools": tools});
    let mut events = vec![
        json!({"type": "response.output_item.added", "output_index": 0, "item": search_call}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": search_call}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": search_output}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": search_output}),
    ];
    for (n, name) in calls.iter().enumerate() {
        let item = json!({"id": format!("fc_{n}"), "type": "function_call", "status": "completed",
            "call_id": format!("call_{n}"), "name": name, "arguments": "{}"});
        events.push(
            json!({"type": "response.output_item.added", "output_index": n + 2,
            "item": item}),
        );
        events.push(
            json!({"type": "response.output_item.done", "output_index": n + 2,
            "item": item}),
        );
    }
    events.push(
        json!({"type": "response.completed", "response": {"id": "resp_1",
        "status": "completed", "output": [], "usage": {"input_tokens": 40, "output_tokens": 9}}}),
    );
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

fn clock() -> Tool {
    Tool::builder("clock", "Tells the time.")
        .handler(|_ctx: Context, _args: Args| async { Ok::<_, std::convert::Infallible>("noon") })
        .build()
}

#[tokio::test]
async fn q1_openai_responses_defers_functions_to_its_tool_search_and_loads_what_it_returns() {
    let server = Server::start([
        Reply::sse(searched_then_calls(
            &["get-weather", "weather-admin"],
            &["get-weather", "weather-admin"],
        )),
        Reply::sse(responses_answer("sunny")),
    ])
    .await;
    let (weather, runs) = deferred("get-weather", "The get-weather tool.", true);
    let (hidden, hidden_runs) = deferred("weather-admin", "The weather-admin tool.", false);
    let agent = Agent::builder(responses(&server, true))
        .tool(clock())
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
        "hidden stays hidden"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(hidden_runs.load(Ordering::SeqCst), 0);

    let requests = server.requests();
    let first = requests[0].json();
    let tools = first["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 3, "the hidden tool is never sent: {tools:?}");
    assert_eq!(tools[0]["name"], "clock");
    assert_eq!(tools[0].get("defer_loading"), None);
    assert_eq!(tools[1]["name"], "get-weather");
    assert_eq!(tools[1]["type"], "function");
    assert_eq!(tools[1]["defer_loading"], true);
    assert_eq!(tools[2], json!({"type": "tool_search"}));
    assert!(!tools.iter().any(|t| t["name"] == SEARCH_TOOL));
    // Once loaded, the function goes plainly, and nothing is deferred any more.
    let second = requests[1].json();
    let tools = second["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2, "{tools:?}");
    assert_eq!(tools[1]["name"], "get-weather");
    assert_eq!(tools[1].get("defer_loading"), None);
}

#[tokio::test]
async fn q1_openai_responses_without_its_tool_search_gets_the_local_search_tool() {
    let server = Server::start([Reply::sse(responses_answer("ok"))]).await;
    let (weather, _) = deferred("get-weather", "The get-weather tool.", true);
    let agent = Agent::builder(responses(&server, false))
        .tool(clock())
        .tool(weather)
        .build()
        .unwrap();
    agent.run(&Context::new(), "weather?").await.unwrap();
    let first = server.requests()[0].json();
    let names: Vec<&str> = (first["tools"].as_array().unwrap().iter())
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["clock", SEARCH_TOOL]);
    assert!(
        !first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["type"] == "tool_search")
    );
}
