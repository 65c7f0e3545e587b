//! Catalogs over MCP (Q1): a server with deferred tools serves the search tool beside the
//! others; `tools/list` shows a deferred tool, and `tools/call` runs it, only once a search
//! of the caller's loaded it. A client that guesses a deferred tool's name gets the answer an
//! unknown name gets, and nothing runs (A5); a search never returns a tool the caller's
//! policies hide (A2); what a search loaded is its owner's: its session's over stdio, its
//! `Authorization`'s on a stateless HTTP server. On 2026-07-28 the owner hears of the change
//! only on the `subscriptions/listen` stream it opened for it (M7).
#![cfg(feature = "mcp")]

mod support {
    pub mod catalog;
    pub mod raw_http;
}
#[path = "support/raw_pipe.rs"]
mod raw_pipe;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::catalog::deferred;

use raw_pipe::{Raw, meta_2026};
use serde_json::{Value, json};
use support::raw_http::RawConnection;
use tool_runtime::mcp::{HttpOptions, McpNaming, McpServer};
use tool_runtime::{Context, Tool};

type Args = std::collections::BTreeMap<String, Value>;

/// A tool advertised from the start.
fn clock() -> Tool {
    Tool::builder("clock", "Tells the time.")
        .handler(|_ctx: Context, _args: Args| async { Ok::<_, std::convert::Infallible>("noon") })
        .build()
}

/// A server with `clock`, the offered deferred tool `get-weather` and the hidden deferred tool
/// `weather-secrets`, with the runs of both deferred tools.
fn server(naming: McpNaming) -> (McpServer, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let (weather, runs) = deferred("get-weather", "Finds the weather forecast.", true);
    let (secret, secret_runs) = deferred("weather-secrets", "Weather forecast secrets.", false);
    let server = McpServer::builder()
        .tool(clock())
        .tool(weather)
        .tool(secret)
        .naming(naming)
        .build()
        .expect("the tools are declared right");
    (server, runs, secret_runs)
}

fn names(list: &Value) -> Vec<String> {
    (list["result"]["tools"]
        .as_array()
        .expect("a tool list")
        .iter())
    .map(|tool| tool["name"].as_str().expect("a name").to_owned())
    .collect()
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

/// The answer without its id, to compare two answers.
fn without_id(mut answer: Value) -> Value {
    answer.as_object_mut().map(|answer| answer.remove("id"));
    answer
}

#[tokio::test]
async fn q1_mcp_a_guessed_deferred_tool_is_unknown_until_a_search_loads_it() {
    let (server, runs, _) = server(McpNaming::Declared);
    let mut raw = Raw::open(server, "2025-11-25").await;
    let (init_list, _) = raw.request("tools/list", json!({})).await;
    assert_eq!(names(&init_list), ["clock", "search-tools"]);

    // A5: guessed before a search, it is answered as a name the server does not hold.
    let (guessed, _) = raw
        .request("tools/call", call("get-weather", json!({"city": "Paris"})))
        .await;
    let (unknown, _) = raw
        .request("tools/call", call("no-such-tool", json!({"city": "Paris"})))
        .await;
    assert_eq!(
        without_id(guessed.clone()),
        without_id(unknown),
        "{guessed}"
    );
    assert_eq!(guessed["result"]["isError"], true);
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing ran");

    // The search returns it (and not the hidden tool), and the session is told.
    let (found, notified) = raw
        .request(
            "tools/call",
            call("search-tools", json!({"query": "weather"})),
        )
        .await;
    let text = found["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    let result: Value = serde_json::from_str(text).expect("JSON");
    assert_eq!(result["tools"][0]["name"], "get-weather", "{result}");
    assert_eq!(
        result["tools"].as_array().map(Vec::len),
        Some(1),
        "{result}"
    );
    let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
    assert!(notified.contains(&changed), "{notified:?}");

    let (list, _) = raw.request("tools/list", json!({})).await;
    assert_eq!(names(&list), ["clock", "get-weather", "search-tools"]);
    let (called, _) = raw
        .request("tools/call", call("get-weather", json!({"city": "Paris"})))
        .await;
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn q1_mcp_a_search_never_returns_or_loads_a_tool_the_callers_policies_hide() {
    let (server, _, secret_runs) = server(McpNaming::Declared);
    let mut raw = Raw::open(server, "2025-11-25").await;
    let (found, notified) = raw
        .request(
            "tools/call",
            call("search-tools", json!({"query": "secrets", "limit": 20})),
        )
        .await;
    let text = found["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert_eq!(
        serde_json::from_str::<Value>(text).ok(),
        Some(json!({"tools": []}))
    );
    assert!(notified.is_empty(), "nothing was loaded: {notified:?}");
    let later = raw.next_within(std::time::Duration::from_millis(100)).await;
    assert!(later.is_none(), "nothing was loaded: {later:?}");
    let (called, _) = raw
        .request("tools/call", call("weather-secrets", json!({})))
        .await;
    assert_eq!(called["result"]["isError"], true);
    assert_eq!(secret_runs.load(Ordering::SeqCst), 0);
    let (list, _) = raw.request("tools/list", json!({})).await;
    assert_eq!(names(&list), ["clock", "search-tools"]);
}

#[tokio::test]
async fn q1_m2_a_search_returns_the_names_the_server_publishes() {
    let (server, runs, _) = server(McpNaming::SnakeCase);
    let mut raw = Raw::open(server, "2025-11-25").await;
    let (found, _) = raw
        .request(
            "tools/call",
            call("search_tools", json!({"query": "forecast"})),
        )
        .await;
    let text = found["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    let result: Value = serde_json::from_str(text).expect("JSON");
    assert_eq!(result["tools"][0]["name"], "get_weather", "{result}");
    let (called, _) = raw
        .request("tools/call", call("get_weather", json!({"city": "Oslo"})))
        .await;
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn q1_mcp_hostile_searches_are_refused_clearly_and_load_nothing() {
    let (server, _, _) = server(McpNaming::Declared);
    let mut raw = Raw::open(server, "2025-11-25").await;
    let huge = "weather ".repeat(100_000);
    let hostile = [
        json!({"query": huge}),
        json!({"query": 7}),
        json!({"query": "weather", "limit": -1}),
        json!({"query": "weather", "limit": 1e300}),
        json!({"query": "weather", "extra": true}),
        json!({}),
    ];
    for arguments in hostile {
        let (answer, notified) = raw
            .request("tools/call", call("search-tools", arguments))
            .await;
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("");
        assert!(
            text.contains("query") || text.contains("limit") || text.contains("extra"),
            "{text}"
        );
        assert!(notified.is_empty());
    }
    let (list, _) = raw.request("tools/list", json!({})).await;
    assert_eq!(names(&list), ["clock", "search-tools"]);
}

/// Q1, M7 on 2026-07-28 over stdio: the session hears that its tool list changed only on the
/// `subscriptions/listen` stream it opened asking for it (tagged with the stream's id), not
/// unasked as a session of an earlier protocol does.
#[tokio::test]
async fn q1_m7_on_2026_07_28_a_load_is_told_on_the_listen_stream_only() {
    let (server, _, _) = server(McpNaming::Declared);
    let mut raw = Raw::unopened(server);
    let meta = meta_2026("q1", json!({}));
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 100, "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": meta}}),
    )
    .await;
    let ack = raw.next().await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "{ack}"
    );
    let search = json!({"name": "search-tools", "arguments": {"query": "weather"}, "_meta": meta});
    let (found, notified) = raw.request("tools/call", search).await;
    assert_eq!(found["result"]["isError"], false, "{found}");
    let on_stream = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 100}}});
    assert_eq!(notified, [on_stream]);
}

/// POSTs `message` to a stateless server as the holder of `token`.
async fn post(addr: std::net::SocketAddr, token: &str, message: &Value) -> Value {
    let mut connection = RawConnection::open(addr).await;
    let bearer = format!("Bearer {token}");
    let headers = [
        ("Authorization", bearer.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let response = connection.post(&headers, message).await;
    assert_eq!(response.status, 200, "{}", response.body);
    response.messages().into_iter().next().expect("an answer")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q1_mcp_without_sessions_a_search_loads_for_the_holder_of_its_authorization() {
    let (server, runs, _) = server(McpNaming::Declared);
    let http = (server.bind_http("127.0.0.1:0", HttpOptions::new().stateless().json_answers()))
        .await
        .expect("a loopback port is free");
    let addr = http.local_addr();
    let request = |id: u32, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let weather = call("get-weather", json!({"city": "Rome"}));
    let search = call("search-tools", json!({"query": "weather forecast"}));

    let guessed = post(addr, "alice", &request(1, weather.clone())).await;
    assert_eq!(guessed["result"]["isError"], true, "{guessed}");
    let found = post(addr, "alice", &request(2, search)).await;
    assert_eq!(found["result"]["isError"], false, "{found}");
    let called = post(addr, "alice", &request(3, weather.clone())).await;
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // Another token's caller did not search: the tool stays unknown to it.
    let other = post(addr, "bob", &request(4, weather)).await;
    assert_eq!(other["result"]["isError"], true, "{other}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}});
    assert_eq!(
        names(&post(addr, "bob", &list).await),
        ["clock", "search-tools"]
    );
    let listed = names(&post(addr, "alice", &list).await);
    assert_eq!(listed, ["clock", "get-weather", "search-tools"]);
    http.shutdown().await.expect("shuts down");
}
