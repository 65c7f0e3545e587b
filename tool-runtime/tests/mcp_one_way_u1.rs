//! U1: every `tools/call` enters the same pipeline, whatever brought it. One server, one hook
//! (K1) that counts the calls it sees and one `on_outcome` (E3), reached over stdio, over
//! stateful streamable HTTP, over stateless HTTP through rmcp's service, and over stateless
//! HTTP answered directly (the server's fast path): each call reaches the hook and the
//! application, with the same answer.
#![cfg(feature = "mcp")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_runtime::hook::{Before, before_fn};
use tool_runtime::mcp::{HttpOptions, McpServer, McpToolset, McpTransport};
use tool_runtime::violation::ParseCx;
use tool_runtime::{BoxError, Context, Tool};

/// What the hook and the application saw.
#[derive(Clone, Default)]
struct Seen {
    hooked: Arc<AtomicUsize>,
    outcomes: Arc<Mutex<Vec<(McpTransport, String)>>>,
}

fn server(seen: &Seen) -> McpServer {
    let echo = Tool::builder("echo", "Repeats its arguments.")
        .dynamic_handler(
            json!({"type": "object"}),
            |_: &Value, _: &mut ParseCx| {},
            |_ctx: Context, args: Value| async move { Ok::<_, BoxError>(args["say"].clone()) },
        )
        .build();
    let hooked = Arc::clone(&seen.hooked);
    let outcomes = Arc::clone(&seen.outcomes);
    McpServer::builder()
        .tool(echo)
        .hook(before_fn(move |_| {
            hooked.fetch_add(1, Ordering::SeqCst);
            Before::Allow
        }))
        .on_outcome(move |call| {
            let seen = (call.transport, call.outcome.text().to_owned());
            outcomes.lock().expect("not poisoned").push(seen);
        })
        .build()
        .expect("the tool is declared right")
}

async fn call_through(toolset: &McpToolset) -> String {
    let tool = (toolset.tools().iter())
        .find(|t| t.name() == "echo")
        .expect("listed");
    let outcome = tool.invoke(&Context::new(), br#"{"say":"hi"}"#).await;
    outcome.text().to_owned()
}

/// A `tools/call` POSTed as is to a stateless server, and the text of its answer.
async fn post_call(url: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"say": "hi"}}});
    let answer: Value = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .expect("the server answers")
        .json()
        .await
        .expect("a JSON answer");
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"))
        .to_owned()
}

#[tokio::test]
async fn u1_k1_e3_every_transport_enters_the_same_pipeline() {
    let seen = Seen::default();
    let server = server(&seen);
    let mut answers = Vec::new();

    // Stdio (a byte stream).
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let stdio = server.clone();
    tokio::spawn(async move { stdio.serve_io(server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    let toolset = McpToolset::builder()
        .connect_io(client_read, client_write)
        .await
        .expect("our client connects over a pipe");
    answers.push(call_through(&toolset).await);

    // Stateful streamable HTTP, through rmcp's service.
    let http = (server.bind_http("127.0.0.1:0", HttpOptions::new()).await).expect("a free port");
    let toolset = (McpToolset::builder().connect_http(http.url()).await).expect("connects");
    answers.push(call_through(&toolset).await);

    // Stateless HTTP with JSON answers: through rmcp's service, then answered directly.
    for direct in [false, true] {
        let options = HttpOptions::new()
            .stateless()
            .json_answers()
            .direct_calls(direct);
        let http = (server.bind_http("127.0.0.1:0", options).await).expect("a free port");
        answers.push(post_call(&http.url()).await);
        assert_eq!(http.direct_calls_answered(), u64::from(direct));
    }

    assert!(answers.iter().all(|a| a == "hi"), "{answers:?}");
    assert_eq!(
        seen.hooked.load(Ordering::SeqCst),
        answers.len(),
        "the hook saw every call"
    );
    let outcomes = seen.outcomes.lock().expect("not poisoned").clone();
    let transports: Vec<McpTransport> = outcomes.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        transports,
        [
            McpTransport::Stdio,
            McpTransport::Http,
            McpTransport::Http,
            McpTransport::Http
        ]
    );
    assert!(
        outcomes.iter().all(|(_, text)| text == "hi"),
        "{outcomes:?}"
    );
}
