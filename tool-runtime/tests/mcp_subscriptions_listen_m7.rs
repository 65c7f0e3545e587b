//! M7 (subscriptions, protocol 2026-07-28): a client hears of changes on the
//! `subscriptions/listen` stream it opens (SEP-2575), over streamable HTTP as a client sees it.
//! The stream's first message is `notifications/subscriptions/acknowledged`, naming what the
//! server agreed to send; every message on it carries the stream's subscription id (the
//! listen request's id); it gets only what it asked for (a prompt-list change reaches a
//! stream that asked for it and no other), resource updates only of resources the caller may
//! read (A5: a hidden resource is acknowledged as any URI, and never notified), and nothing of
//! tools on a server whose tool list never changes; where a search loads a deferred tool (Q1),
//! the streams of that search's owner, and no other's, hear that their tool list changed.
//! A stream's caller is checked again at each resource update, on the context it opened the
//! stream with: a permission revoked after it opened stops its updates. Closing the stream
//! forgets it. Hostile filters (thousands of URIs, huge ones, a filter that
//! is not an object) get a bounded acknowledgement or a clear `-32602`, never a panic.
#![cfg(feature = "mcp")]

mod support {
    pub mod catalog;
    pub mod raw_http;
}

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use support::catalog::deferred;
use support::raw_http::RawConnection;
use tool_runtime::mcp::{
    HttpOptions, HttpServer, McpPrompt, McpRequest, McpResource, McpServer, Message,
};
use tool_runtime::{Context, ToolError};

/// The `_meta` key of a stream's subscription id.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// How long a test waits for a message that should not come.
const QUIET: Duration = Duration::from_millis(300);

/// A server of a public resource, one no caller may read, and a prompt.
async fn serve() -> (McpServer, HttpServer) {
    let server = McpServer::builder()
        .resource(
            McpResource::builder("docs://guide", "guide")
                .read(|_ctx: Context| async { Ok::<_, ToolError>("# Windows") })
                .build(),
        )
        .resource(
            McpResource::builder("maint://log", "maintenance-log")
                .available_fn(|_ctx: &Context| Ok::<_, ToolError>(false))
                .read(|_ctx: Context| async { Ok::<_, ToolError>("restarted db-1") })
                .build(),
        )
        .prompt(
            McpPrompt::builder("plan", "Plans a window.")
                .get(|_ctx: Context| async { Ok::<_, ToolError>(vec![Message::user("Plan.")]) })
                .build(),
        )
        .build()
        .expect("the server builds");
    let http = (server.clone())
        .bind_http("127.0.0.1:0", HttpOptions::new())
        .await
        .expect("binds");
    (server, http)
}

/// An open listen stream.
struct Stream {
    connection: RawConnection,
    pending: String,
}

/// The headers of a listen request.
const HEADERS: [(&str, &str); 2] = [
    ("MCP-Protocol-Version", "2026-07-28"),
    ("Mcp-Method", "subscriptions/listen"),
];

/// A `subscriptions/listen` request with the id `id`, asking for `notifications`.
fn listen(id: i64, notifications: Value) -> Value {
    json!({
            "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": {
                "notifications": notifications,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "m7", "version": "0"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
    })
}

impl Stream {
    /// Opens a stream with the request id `id`, asking for `notifications`; its HTTP status.
    async fn open(http: &HttpServer, id: i64, notifications: Value) -> (u16, Self) {
        Self::open_as(http, id, notifications, None).await
    }

    /// [`Stream::open`], with the `Authorization` header `authorization` when given.
    async fn open_as(
        http: &HttpServer,
        id: i64,
        notifications: Value,
        authorization: Option<&str>,
    ) -> (u16, Self) {
        let mut connection = RawConnection::open(http.local_addr()).await;
        let mut headers = HEADERS.to_vec();
        headers.extend(authorization.map(|value| ("Authorization", value)));
        let head = (connection.post_stream(&headers, &listen(id, notifications))).await;
        let stream = Self {
            connection,
            pending: String::new(),
        };
        (head.status, stream)
    }

    /// The next message within `wait`.
    async fn next(&mut self, wait: Duration) -> Option<Value> {
        self.connection.next_event(&mut self.pending, wait).await
    }

    /// The acknowledgement, which must come first.
    async fn acknowledged(&mut self) -> Value {
        let first = self.next(Duration::from_secs(10)).await.expect("a message");
        assert_eq!(
            first["method"], "notifications/subscriptions/acknowledged",
            "{first}"
        );
        first
    }
}

/// Waits until `server` holds `streams` open streams.
async fn until_listening(server: &McpServer, streams: usize) {
    for _ in 0..200 {
        if server.listening() == streams {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{} streams open, not {streams}", server.listening());
}

/// M7 on 2026-07-28: the acknowledgement comes first and names what was agreed (tools left
/// out: this server's tool list never changes); each message carries the stream's id; a
/// prompt-list change reaches the stream that asked for it, not the one that did not.
#[tokio::test]
async fn m7_a_listen_stream_is_acknowledged_tagged_and_gets_only_what_it_asked() {
    let (server, http) = serve().await;
    let (status, mut prompts) = Stream::open(
        &http,
        41,
        json!({"promptsListChanged": true, "toolsListChanged": true}),
    )
    .await;
    assert_eq!(status, 200);
    let ack = prompts.acknowledged().await;
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], 41, "{ack}");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true}),
        "{ack}"
    );
    let (_, mut resources) = Stream::open(&http, 42, json!({"resourcesListChanged": true})).await;
    resources.acknowledged().await;
    until_listening(&server, 2).await;

    assert_eq!(server.prompts_changed().await, 1, "one stream asked for it");
    let heard = prompts.next(Duration::from_secs(5)).await.expect("heard");
    assert_eq!(heard["method"], "notifications/prompts/list_changed");
    assert_eq!(heard["params"]["_meta"][SUBSCRIPTION_ID], 41, "{heard}");
    assert!(resources.next(QUIET).await.is_none(), "not asked for");

    assert_eq!(server.resources_changed().await, 1);
    let heard = resources.next(Duration::from_secs(5)).await.expect("heard");
    assert_eq!(heard["method"], "notifications/resources/list_changed");
    assert_eq!(heard["params"]["_meta"][SUBSCRIPTION_ID], 42, "{heard}");
    assert!(prompts.next(QUIET).await.is_none(), "not asked for");
    http.shutdown().await.expect("shuts down");
}

/// M7, A5 on 2026-07-28: a stream hears of the resources it named that the caller may read;
/// a hidden one is acknowledged as any URI (saying otherwise would tell it exists) and never
/// notified; closing the stream forgets it.
#[tokio::test]
async fn m7_a_listen_stream_hears_of_readable_resources_until_it_closes() {
    let (server, http) = serve().await;
    let uris = json!(["docs://guide", "maint://log", "nowhere://x"]);
    let (_, mut stream) = Stream::open(&http, 7, json!({"resourceSubscriptions": uris})).await;
    let ack = stream.acknowledged().await;
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"], uris,
        "{ack}"
    );
    until_listening(&server, 1).await;
    assert_eq!(server.subscribers("docs://guide"), 1);
    assert_eq!(
        server.subscribers("maint://log"),
        0,
        "hidden from the caller"
    );

    assert_eq!(server.resource_updated("docs://guide").await, 1);
    let heard = stream.next(Duration::from_secs(5)).await.expect("heard");
    assert_eq!(heard["method"], "notifications/resources/updated");
    assert_eq!(heard["params"]["uri"], "docs://guide");
    assert_eq!(heard["params"]["_meta"][SUBSCRIPTION_ID], 7, "{heard}");
    assert_eq!(server.resource_updated("maint://log").await, 0);
    assert!(stream.next(QUIET).await.is_none());

    drop(stream);
    until_listening(&server, 0).await;
    assert_eq!(server.resource_updated("docs://guide").await, 0);
    http.shutdown().await.expect("shuts down");
}

/// M7, hostile filters: thousands of URIs and huge ones are acknowledged bounded (at most 256
/// distinct, none longer than 8 KiB); a filter that is not an object, or no filter,
/// is `-32602` saying what is wrong. The server goes on serving.
#[tokio::test]
async fn m7_hostile_listen_filters_are_bounded_or_refused_clearly() {
    let (server, http) = serve().await;
    let mut uris: Vec<String> = (0..5_000).map(|i| format!("docs://{i}")).collect();
    uris.insert(0, format!("docs://{}", "x".repeat(100_000)));
    uris.insert(1, "docs://guide".to_owned());
    uris.insert(2, "docs://guide".to_owned());
    let (_, mut stream) = Stream::open(&http, 9, json!({"resourceSubscriptions": uris})).await;
    let ack = stream.acknowledged().await;
    let acknowledged = ack["params"]["notifications"]["resourceSubscriptions"]
        .as_array()
        .expect("URIs acknowledged")
        .clone();
    // The acknowledgement lists the requested URIs agreed to, in the request's order (rmcp
    // repeats one the client repeated).
    let distinct: BTreeSet<&str> = acknowledged.iter().filter_map(Value::as_str).collect();
    assert_eq!(distinct.len(), 256);
    assert_eq!(acknowledged[0], "docs://guide", "the huge URI is left out");
    assert!(distinct.iter().all(|uri| uri.len() <= 8 * 1024));
    drop(stream);

    for notifications in [json!(5), json!("all"), Value::Null] {
        let mut connection = RawConnection::open(http.local_addr()).await;
        let response = (connection.post(&HEADERS, &listen(10, notifications.clone()))).await;
        let answer = response.messages().into_iter().next();
        let answer = answer.unwrap_or_else(|| panic!("an answer to {notifications}: {response:?}"));
        assert_eq!(answer["id"], 10, "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{notifications}: {answer}");
    }
    until_listening(&server, 0).await;
    let (_, mut still) = Stream::open(&http, 11, json!({"promptsListChanged": true})).await;
    still.acknowledged().await;
    http.shutdown().await.expect("shuts down");
}

/// M7: one caller (the holder of one authorization) keeps at most 64 streams open at once,
/// so that it cannot take every stream the server keeps; another caller still opens one.
#[tokio::test]
async fn m7_one_caller_cannot_take_every_listen_stream() {
    let (server, http) = serve().await;
    let asked = json!({"promptsListChanged": true});
    let mut open = Vec::new();
    for id in 0..64 {
        let (_, mut stream) = Stream::open_as(&http, id, asked.clone(), Some("Bearer one")).await;
        stream.acknowledged().await;
        open.push(stream);
    }
    until_listening(&server, 64).await;
    let (_, mut refused) = Stream::open_as(&http, 64, asked.clone(), Some("Bearer one")).await;
    let mut answer = None;
    while let Some(message) = refused.next(Duration::from_secs(5)).await {
        if message.get("error").is_some() {
            answer = Some(message);
            break;
        }
    }
    let answer = answer.expect("the 65th stream of one caller is refused");
    assert_eq!(answer["id"], 64, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("too many subscription streams")),
        "{answer}"
    );
    until_listening(&server, 64).await;
    let (_, mut other) = Stream::open_as(&http, 65, asked, Some("Bearer two")).await;
    other.acknowledged().await;
    until_listening(&server, 65).await;
    drop(open);
    http.shutdown().await.expect("shuts down");
}

/// A 2026-07-28 `tools/call` of the search tool, finding the weather tools, as the holder of
/// `authorization`: its result.
async fn search(http: &HttpServer, authorization: &str) -> Value {
    let call = json!({
        "jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {
            "name": "search-tools",
            "arguments": {"query": "weather"},
            "_meta": listen(0, json!({}))["params"]["_meta"].clone(),
        },
    });
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "search-tools"),
        ("Authorization", authorization),
    ];
    let mut connection = RawConnection::open(http.local_addr()).await;
    let response = connection.post(&headers, &call).await;
    let answer = response.messages().into_iter().next();
    answer.unwrap_or_else(|| panic!("an answer: {response:?}"))["result"].clone()
}

/// M7, Q1 on 2026-07-28: where a search can load a deferred tool, a stream is acknowledged
/// the tool list changes it asked for; a search that loads one tells the streams of its owner
/// (the holder of its `Authorization`) that asked, tagged with each stream's id, and not
/// another caller's stream, whose list did not change; a search that loads nothing new tells
/// no one.
#[tokio::test]
async fn m7_q1_a_search_that_loads_a_tool_tells_its_owners_listen_streams_only() {
    let (weather, _) = deferred("get-weather", "Finds the weather forecast.", true);
    let server = McpServer::builder().tool(weather).build().expect("builds");
    let http = (server.clone())
        .bind_http("127.0.0.1:0", HttpOptions::new())
        .await
        .expect("binds");
    let asked = json!({"toolsListChanged": true});
    let (_, mut alice) = Stream::open_as(&http, 51, asked.clone(), Some("Bearer alice")).await;
    let ack = alice.acknowledged().await;
    assert_eq!(ack["params"]["notifications"], asked, "{ack}");
    let (_, mut bob) = Stream::open_as(&http, 52, asked.clone(), Some("Bearer bob")).await;
    bob.acknowledged().await;
    until_listening(&server, 2).await;

    let found = search(&http, "Bearer alice").await;
    assert_eq!(found["isError"], false, "{found}");
    let heard = alice.next(Duration::from_secs(5)).await.expect("heard");
    assert_eq!(
        heard["method"], "notifications/tools/list_changed",
        "{heard}"
    );
    assert_eq!(heard["params"]["_meta"][SUBSCRIPTION_ID], 51, "{heard}");
    assert!(bob.next(QUIET).await.is_none(), "another caller's list");

    let again = search(&http, "Bearer alice").await;
    assert_eq!(again["isError"], false, "{again}");
    assert!(alice.next(QUIET).await.is_none(), "nothing new was loaded");
    http.shutdown().await.expect("shuts down");
}

/// Who made a request: its `Authorization` header, as the context function puts it.
struct Caller(String);

/// M7, A4 on 2026-07-28: each update is checked again for each stream's caller, on the
/// context the stream was opened with: once the policy no longer lets Alice read the
/// resource (a flag flipped after her stream opened), her stream hears no more of it, while
/// Bob's, still allowed, does.
#[tokio::test]
async fn m7_a_permission_revoked_after_a_stream_opened_stops_its_updates() {
    let revoked = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&revoked);
    let allowed = move |ctx: &Context| {
        let caller = ctx.get::<Caller>().map_or("", |caller| caller.0.as_str());
        Ok::<_, ToolError>(caller == "Bearer bob" || !flag.load(Ordering::SeqCst))
    };
    let server = McpServer::builder()
        .context(|request: McpRequest| {
            let caller = request.header("authorization").unwrap_or("").to_owned();
            async move { Ok::<_, ToolError>(Context::new().with(Caller(caller))) }
        })
        .resource(
            McpResource::builder("docs://plan", "plan")
                .available_fn(allowed)
                .read(|_ctx: Context| async { Ok::<_, ToolError>("# Plan") })
                .build(),
        )
        .build()
        .expect("the server builds");
    let http = (server.clone())
        .bind_http("127.0.0.1:0", HttpOptions::new())
        .await
        .expect("binds");
    let asked = json!({"resourceSubscriptions": ["docs://plan"]});
    let (_, mut alice) = Stream::open_as(&http, 61, asked.clone(), Some("Bearer alice")).await;
    alice.acknowledged().await;
    let (_, mut bob) = Stream::open_as(&http, 62, asked, Some("Bearer bob")).await;
    bob.acknowledged().await;
    until_listening(&server, 2).await;
    assert_eq!(server.resource_updated("docs://plan").await, 2);
    for stream in [&mut alice, &mut bob] {
        let heard = stream.next(Duration::from_secs(5)).await.expect("heard");
        assert_eq!(heard["params"]["uri"], "docs://plan", "{heard}");
    }

    revoked.store(true, Ordering::SeqCst);
    assert_eq!(
        server.resource_updated("docs://plan").await,
        1,
        "Bob's only"
    );
    let heard = bob.next(Duration::from_secs(5)).await.expect("heard");
    assert_eq!(heard["params"]["_meta"][SUBSCRIPTION_ID], 62, "{heard}");
    assert!(alice.next(QUIET).await.is_none(), "revoked after it opened");
    http.shutdown().await.expect("shuts down");
}
