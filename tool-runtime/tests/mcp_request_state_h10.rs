//! H10: the `requestState` an MCP server hands a client in an `input_required` answer (protocol
//! 2026-07-28, H6) is sealed with the server's key, bound to the call it asked about and given
//! an expiry. A client cannot make up an answer to a question it was never asked: a forged,
//! altered, expired, replayed, foreign or misapplied state is answered
//! `the call was not approved`, and nothing runs.
//!
//! Every test speaks raw JSON-RPC over streamable HTTP to a stateless server (the deployment
//! of replicas behind a balancer, where the retry may reach any process), as a client on
//! 2026-07-28 does: each request carries its protocol version and capabilities in `_meta`. The
//! tools' handlers count their runs; each test checks the count. (The official Python SDK's
//! client drives the same round trip in `mcp_approval.rs` over stdio and in
//! `examples/tests/scale_out.rs` across two replicas behind HAProxy.)
#![cfg(feature = "mcp")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tool_runtime::approval::Approval;
use tool_runtime::mcp::{HttpOptions, HttpServer, McpServer, NO_ELICITATION};
use tool_runtime::{BuildProblem, Context, NOT_APPROVED, Schema, Tool};

/// Which service.
#[derive(Schema)]
struct Service {
    /// The service.
    #[schema(pattern = "^[a-z0-9-]+$")]
    service_id: String,
    /// A note for the service's log.
    #[allow(dead_code)]
    note: Option<String>,
}

/// The key the tests configure; any other key is another server's.
const KEY: &[u8] = b"h10 test key: thirty-two bytes or more of secret";

/// A running server and how many times its tools' handlers ran.
struct Served {
    http: HttpServer,
    runs: Arc<AtomicUsize>,
}

impl Served {
    fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

/// A stateless server with `restart` (approval for `prod-` services) and `purge` (approval
/// always), both counting into one counter, sealing with `key` (or its own random key).
async fn serve(key: Option<&[u8]>, expiry: Option<Duration>) -> Served {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let restart = Tool::builder("restart", "Restarts a service now.")
        .handler(move |_ctx: Context, s: Service| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, std::io::Error>(format!("{} restarted", s.service_id)) }
        })
        .approval_fn(|_ctx: &Context, s: &Service| {
            Ok::<_, std::io::Error>(if s.service_id.starts_with("prod-") {
                Approval::required(format!("{} serves production traffic", s.service_id))
            } else {
                Approval::NotRequired
            })
        })
        .build();
    let counted = Arc::clone(&runs);
    let purge = Tool::builder("purge", "Purges a service's data.")
        .handler(move |_ctx: Context, s: Service| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, std::io::Error>(format!("{} purged", s.service_id)) }
        })
        .approval_fn(|_ctx: &Context, s: &Service| {
            Ok::<_, std::io::Error>(Approval::required(format!(
                "{} serves production traffic",
                s.service_id
            )))
        })
        .build();
    let mut builder = McpServer::builder().tool(restart).tool(purge);
    if let Some(key) = key {
        builder = builder.state_key(key);
    }
    if let Some(expiry) = expiry {
        builder = builder.approval_expiry(expiry);
    }
    let http = builder
        .build()
        .expect("the tools are declared right")
        .bind_http("127.0.0.1:0", HttpOptions::new().stateless().json_answers())
        .await
        .expect("a loopback port is free");
    Served { http, runs }
}

/// What a raw client says in a call besides the tool and arguments.
#[derive(Clone, Copy)]
struct Client {
    /// Whether it declares the elicitation capability.
    elicitation: bool,
}

const ASKS: Client = Client { elicitation: true };
const CANNOT_ASK: Client = Client { elicitation: false };

/// The `_meta` a 2026-07-28 client sends with every request.
fn meta(client: Client) -> Value {
    let capabilities = if client.elicitation {
        json!({"elicitation": {"form": {}}})
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "h10-raw-client", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// A `tools/call` of `tool` with `arguments`; `retry`: the state brought back and the user's
/// action (`accept`, `decline`), as a retry carries them.
async fn call(
    served: &Served,
    client: Client,
    tool: &str,
    arguments: Value,
    retry: Option<(&str, &str)>,
) -> Value {
    let mut params = json!({"name": tool, "arguments": arguments, "_meta": meta(client)});
    if let Some((state, action)) = retry {
        params["requestState"] = json!(state);
        let content = if action == "accept" {
            json!({})
        } else {
            Value::Null
        };
        params["inputResponses"] =
            json!({"tool-runtime/approval": {"action": action, "content": content}});
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let answer = post(served, &body).await;
    assert_eq!(answer["id"], 1, "{answer}");
    answer["result"].clone()
}

/// Asks: the first call of a call needing approval, which must be a question; its state.
async fn ask(served: &Served, tool: &str, arguments: Value) -> String {
    let runs = served.runs();
    let result = call(served, ASKS, tool, arguments, None).await;
    assert_eq!(result["resultType"], "input_required", "{result}");
    let question = &result["inputRequests"]["tool-runtime/approval"];
    assert_eq!(question["method"], "elicitation/create", "{result}");
    assert_eq!(served.runs(), runs, "a question runs nothing");
    result["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("a question has a state: {result}"))
        .to_owned()
}

/// The call ran: a success with `text`.
#[track_caller]
fn assert_ran(result: &Value, text: &str) {
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["content"][0]["text"], text, "{result}");
}

/// The call was not approved, as a declined question is answered.
#[track_caller]
fn assert_not_approved(result: &Value) {
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["content"][0]["text"], NOT_APPROVED, "{result}");
    assert_eq!(
        result["_meta"]["tool-runtime/outcome"], "denied",
        "{result}"
    );
}

fn prod(service: &str) -> Value {
    json!({"service_id": service})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h10_the_asked_call_answered_accept_runs_once() {
    let served = serve(Some(KEY), None).await;
    let state = ask(&served, "restart", prod("prod-1")).await;
    assert!(state.starts_with("ta1."), "{state}");
    let result = call(
        &served,
        ASKS,
        "restart",
        prod("prod-1"),
        Some((&state, "accept")),
    )
    .await;
    assert_ran(&result, "prod-1 restarted");
    assert_eq!(served.runs(), 1);
    // Declined, a question is not approved, as before.
    let state = ask(&served, "restart", prod("prod-2")).await;
    let result = call(
        &served,
        ASKS,
        "restart",
        prod("prod-2"),
        Some((&state, "decline")),
    )
    .await;
    assert_not_approved(&result);
    assert_eq!(served.runs(), 1);
    served.http.shutdown().await.expect("shuts down");
}

/// The state the server handed out before H10: an unkeyed SHA-256 of the tool and arguments,
/// which any client could compute.
fn unkeyed_state(tool: &str, args: &[u8]) -> String {
    let digest = Sha256::new()
        .chain_update(tool.as_bytes())
        .chain_update([0])
        .chain_update(args)
        .finalize();
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("approval:{hex}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h10_forged_states_are_not_approved_and_nothing_runs() {
    let served = serve(Some(KEY), None).await;
    let args = prod("prod-1");
    let mut random = [0_u8; 56];
    for (i, byte) in random.iter_mut().enumerate() {
        *byte = u8::try_from(i * 37 % 251).expect("a byte");
    }
    let random = format!("ta1.{}", URL_SAFE_NO_PAD.encode(random));
    let huge = format!("ta1.{}", "A".repeat(256 * 1024));
    let genuine = ask(&served, "restart", args.clone()).await;
    let mut altered = genuine.clone().into_bytes();
    let last = altered.len() - 10;
    altered[last] = if altered[last] == b'a' { b'b' } else { b'a' };
    let altered = String::from_utf8(altered).expect("ASCII");
    let forged = [
        // The old unkeyed hash, recomputed as a client could.
        unkeyed_state("restart", args.to_string().as_bytes()),
        random,
        String::new(),
        huge,
        altered,
    ];
    for state in &forged {
        let result = call(
            &served,
            ASKS,
            "restart",
            args.clone(),
            Some((state, "accept")),
        )
        .await;
        assert_not_approved(&result);
    }
    // Sent with a first call, asked nothing before, it is not an approval either.
    let fresh = serve(Some(KEY), None).await;
    let result = call(
        &fresh,
        ASKS,
        "restart",
        prod("prod-9"),
        Some((
            &unkeyed_state("restart", prod("prod-9").to_string().as_bytes()),
            "accept",
        )),
    )
    .await;
    assert_not_approved(&result);
    assert_eq!((served.runs(), fresh.runs()), (0, 0), "nothing ran");
    served.http.shutdown().await.expect("shuts down");
    fresh.http.shutdown().await.expect("shuts down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h10_a_state_counts_only_for_the_tool_and_arguments_it_was_asked_about() {
    let served = serve(Some(KEY), None).await;
    let state = ask(&served, "restart", prod("prod-1")).await;
    // Tool A's question, answered for tool B with the same arguments.
    let result = call(
        &served,
        ASKS,
        "purge",
        prod("prod-1"),
        Some((&state, "accept")),
    )
    .await;
    assert_not_approved(&result);
    // The same tool with other arguments.
    let result = call(
        &served,
        ASKS,
        "restart",
        prod("prod-2"),
        Some((&state, "accept")),
    )
    .await;
    assert_not_approved(&result);
    // Arguments that differ only past what the question shows of them (800 characters).
    let long =
        |last: char| json!({"service_id": "prod-1", "note": format!("{}{last}", "a".repeat(900))});
    let long_state = ask(&served, "restart", long('b')).await;
    let result = call(
        &served,
        ASKS,
        "restart",
        long('c'),
        Some((&long_state, "accept")),
    )
    .await;
    assert_not_approved(&result);
    assert_eq!(served.runs(), 0, "nothing ran");
    // For the call it was asked about, the same state is an approval: the binding refused.
    let result = call(
        &served,
        ASKS,
        "restart",
        prod("prod-1"),
        Some((&state, "accept")),
    )
    .await;
    assert_ran(&result, "prod-1 restarted");
    assert_eq!(served.runs(), 1);
    served.http.shutdown().await.expect("shuts down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h10_an_expired_state_is_not_approved() {
    let served = serve(Some(KEY), Some(Duration::from_secs(1))).await;
    // In time, it is an approval.
    let state = ask(&served, "restart", prod("prod-1")).await;
    let result = call(
        &served,
        ASKS,
        "restart",
        prod("prod-1"),
        Some((&state, "accept")),
    )
    .await;
    assert_ran(&result, "prod-1 restarted");
    // Past its expiry (a second, counted in whole seconds: two and a bit are past it).
    let state = ask(&served, "restart", prod("prod-1")).await;
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    let result = call(
        &served,
        ASKS,
        "restart",
        prod("prod-1"),
        Some((&state, "accept")),
    )
    .await;
    assert_not_approved(&result);
    assert_eq!(served.runs(), 1, "the expired answer ran nothing");
    served.http.shutdown().await.expect("shuts down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h10_a_state_answered_once_is_not_an_approval_again() {
    let served = serve(Some(KEY), None).await;
    let state = ask(&served, "restart", prod("prod-1")).await;
    let retry = Some((state.as_str(), "accept"));
    assert_ran(
        &call(&served, ASKS, "restart", prod("prod-1"), retry).await,
        "prod-1 restarted",
    );
    // The same retry again: a replay after use.
    assert_not_approved(&call(&served, ASKS, "restart", prod("prod-1"), retry).await);
    assert_eq!(served.runs(), 1, "the replay ran nothing");
    // A declined question cannot be answered again with "accept" either.
    let state = ask(&served, "restart", prod("prod-2")).await;
    let declined = call(
        &served,
        ASKS,
        "restart",
        prod("prod-2"),
        Some((&state, "decline")),
    )
    .await;
    assert_not_approved(&declined);
    let again = call(
        &served,
        ASKS,
        "restart",
        prod("prod-2"),
        Some((&state, "accept")),
    )
    .await;
    assert_not_approved(&again);
    assert_eq!(served.runs(), 1);
    served.http.shutdown().await.expect("shuts down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h10_only_a_server_with_the_same_key_takes_a_state() {
    let asker = serve(Some(KEY), None).await;
    let other_key = serve(
        Some(b"another server's key, as long as the first one"),
        None,
    )
    .await;
    let own_key = serve(None, None).await;
    let replica = serve(Some(KEY), None).await;
    let state = ask(&asker, "restart", prod("prod-1")).await;
    for stranger in [&other_key, &own_key] {
        let result = call(
            stranger,
            ASKS,
            "restart",
            prod("prod-1"),
            Some((&state, "accept")),
        )
        .await;
        assert_not_approved(&result);
    }
    assert_eq!((other_key.runs(), own_key.runs()), (0, 0));
    // A replica with the same key takes the question another asked, and runs the call.
    let result = call(
        &replica,
        ASKS,
        "restart",
        prod("prod-1"),
        Some((&state, "accept")),
    )
    .await;
    assert_ran(&result, "prod-1 restarted");
    assert_eq!((asker.runs(), replica.runs()), (0, 1));
    // And the other way round.
    let state = ask(&replica, "purge", prod("prod-2")).await;
    let result = call(
        &asker,
        ASKS,
        "purge",
        prod("prod-2"),
        Some((&state, "accept")),
    )
    .await;
    assert_ran(&result, "prod-2 purged");
    assert_eq!((asker.runs(), replica.runs()), (1, 1));
    // A server without a configured key makes its own: it takes its own states.
    let state = ask(&own_key, "restart", prod("prod-3")).await;
    let result = call(
        &own_key,
        ASKS,
        "restart",
        prod("prod-3"),
        Some((&state, "accept")),
    )
    .await;
    assert_ran(&result, "prod-3 restarted");
    for served in [asker, other_key, own_key, replica] {
        served.http.shutdown().await.expect("shuts down");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h10_a_client_without_elicitation_cannot_get_a_call_approved() {
    let served = serve(Some(KEY), None).await;
    // Asked plainly, it is told it cannot be asked (H6).
    let result = call(&served, CANNOT_ASK, "restart", prod("prod-1"), None).await;
    assert_eq!(result["content"][0]["text"], NO_ELICITATION, "{result}");
    // A first call that brings a made-up or computed state and "accept".
    let made_up = [
        unkeyed_state("restart", prod("prod-1").to_string().as_bytes()),
        "ta1.".to_owned(),
        "approved".to_owned(),
    ];
    for state in &made_up {
        let result = call(
            &served,
            CANNOT_ASK,
            "restart",
            prod("prod-1"),
            Some((state, "accept")),
        )
        .await;
        assert_not_approved(&result);
    }
    // Even a genuine state, asked by a client that could ask, is no approval from one that
    // says it cannot ask its user (and it still counts for the client that was asked).
    let state = ask(&served, "restart", prod("prod-1")).await;
    let result = call(
        &served,
        CANNOT_ASK,
        "restart",
        prod("prod-1"),
        Some((&state, "accept")),
    )
    .await;
    assert_not_approved(&result);
    // An answer without a state, or a state without an answer, is no approval.
    let mut params = json!({"name": "restart", "arguments": prod("prod-1"), "_meta": meta(ASKS),
        "inputResponses": {"tool-runtime/approval": {"action": "accept", "content": {}}}});
    let no_state = post(
        &served,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params.clone()}),
    )
    .await;
    assert_not_approved(&no_state["result"]);
    if let Some(params) = params.as_object_mut() {
        params.remove("inputResponses");
    }
    params["requestState"] = json!(state);
    let no_answer = post(
        &served,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}),
    )
    .await;
    assert_not_approved(&no_answer["result"]);
    assert_eq!(served.runs(), 0, "nothing ran");
    served.http.shutdown().await.expect("shuts down");
}

#[test]
fn h10_an_empty_state_key_is_refused_at_build() {
    let error = McpServer::builder()
        .state_key(Vec::new())
        .build()
        .expect_err("an empty key would seal nothing");
    assert!(matches!(error.problems(), [BuildProblem::EmptyStateKey]));
}

// ─── A raw HTTP client ──────────────────────────────────────────────────────────────────────

/// POSTs `body` to the server's MCP endpoint as a 2026-07-28 client, and reads the JSON answer.
async fn post(served: &Served, body: &Value) -> Value {
    let addr = served.http.local_addr();
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    // 2026-07-28 names the method and the tool in headers too.
    let method = body["method"].as_str().unwrap_or_default();
    let name = body["params"]["name"].as_str().unwrap_or_default();
    let body = body.to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\nMcp-Name: {name}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("writes");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .expect("answered within 10 s")
        .expect("reads");
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("{e}: {head}\n{body}"))
}

/// The payload of a chunked body.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}
