//! Direct calls change nothing a client sees: a stateless server with JSON answers answers a
//! plain `tools/call` itself instead of through rmcp's framing, and every request here, sent
//! byte for byte to a server that does and to the same server that does not
//! (`HttpOptions::direct_calls(false)`), gets the same status, the same headers (the `date`
//! aside) and the same body, and the application observes the same outcomes (E3). The cases
//! cover the pipeline (A5: a hidden tool answered as an unknown one; E2: handler errors
//! redacted; H6: approval refused without sessions), the JSON-RPC envelope (every kind of
//! id, extra members, batches, malformed JSON) and the HTTP edges (T4: `Host`,
//! authentication; `Accept`, `Content-Type`, `MCP-Protocol-Version`). Each case also says
//! whether it is answered directly, and the server's count of direct calls must agree, so
//! the comparison cannot pass with the direct path never taken.
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
    pub mod raw_http;
}

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::mcp::{Principal, served};
use support::raw_http::{RawConnection, RawResponse};
use tool_runtime::approval::Approval;
use tool_runtime::mcp::{HttpOptions, HttpServer, McpRequest, McpServer};
use tool_runtime::{BoxError, Context, Schema, Tool};

/// Input of `restart`, a tool that needs approval for production services.
#[derive(Schema, Debug)]
struct Restart {
    /// The service to restart.
    service_id: String,
}

async fn authenticate(req: McpRequest) -> Result<Context, BoxError> {
    match req.bearer_token() {
        Some("op-token") => Ok(Context::new().with(Principal::OPERATOR)),
        Some("admin-token") => Ok(Context::new().with(Principal::ADMIN)),
        _ => Err("unknown bearer token".into()),
    }
}

/// What the application observed of each call (E3): tool, call id, outcome kind and text.
type Observed = Arc<Mutex<Vec<String>>>;

async fn server(direct: bool) -> (HttpServer, Observed) {
    let observed = Observed::default();
    let log = Arc::clone(&observed);
    let restart = Tool::builder("restart", "Restarts a service.")
        .handler(|_ctx: Context, r: Restart| async move {
            Ok::<_, std::io::Error>(format!("{} restarted", r.service_id))
        })
        .approval_fn(|_ctx: &Context, r: &Restart| {
            Ok::<_, std::io::Error>(if r.service_id.starts_with("prod-") {
                Approval::required("production")
            } else {
                Approval::NotRequired
            })
        })
        .build();
    let mut tools = served().tools;
    tools.push(restart);
    let options = HttpOptions::new()
        .stateless()
        .json_answers()
        .direct_calls(direct);
    let server = McpServer::builder()
        .tools(tools)
        .context(authenticate)
        .on_outcome(move |call| {
            let seen = format!(
                "{} {} {} {}",
                call.tool,
                call.call_id,
                call.outcome.kind(),
                call.outcome.text()
            );
            log.lock().expect("not poisoned").push(seen);
        })
        .build()
        .expect("the tools are declared right")
        .bind_http("127.0.0.1:0", options)
        .await
        .expect("a loopback port is free");
    (server, observed)
}

/// One request: its raw head lines (besides the request line and `Content-Length`), its
/// body, and whether the direct path answers it.
struct Case {
    what: String,
    method: &'static str,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    direct: bool,
}

const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
const JSON: (&str, &str) = ("Content-Type", "application/json");
const OPERATOR: (&str, &str) = ("Authorization", "Bearer op-token");

/// A POST with the usual headers but `headers` (replacing those of the same name; an empty
/// value removes one).
fn post(what: &str, headers: &[(&str, &str)], body: impl Into<Vec<u8>>, direct: bool) -> Case {
    let mut all: Vec<(String, String)> = [ACCEPT, JSON, OPERATOR]
        .iter()
        .filter(|(name, _)| {
            !headers
                .iter()
                .any(|(other, _)| other.eq_ignore_ascii_case(name))
        })
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect();
    all.extend(
        headers
            .iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned())),
    );
    Case {
        what: what.to_owned(),
        method: "POST",
        headers: all,
        body: body.into(),
        direct,
    }
}

/// A `tools/call` of `name` with `arguments` and id 1.
fn call(name: &str, arguments: Value) -> Vec<u8> {
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}});
    serde_json::to_vec(&message).expect("JSON")
}

/// A `tools/call` of `greet` with `id` written as is.
fn with_id(id: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"greet","arguments":{{"who":"x"}}}}}}"#
    )
    .into_bytes()
}

/// A `tools/call` of `greet` with `params` written as is.
fn with_params(params: &str) -> Vec<u8> {
    format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{params}}}"#).into_bytes()
}

fn pipeline_cases() -> Vec<Case> {
    let valid = json!({"service_id": "svc-42"});
    vec![
        post(
            "a valid call",
            &[],
            call("lookup-window", valid.clone()),
            true,
        ),
        post(
            "several violations",
            &[],
            call(
                "lookup-window",
                json!({"service_id": "", "days": 99, "x": 1}),
            ),
            true,
        ),
        post("a wrong type", &[], call("greet", json!({"who": 5})), true),
        post("an unknown tool (A5)", &[], call("nope", json!({})), true),
        post(
            "a hidden tool (A5)",
            &[],
            call("admin-reset", json!({})),
            true,
        ),
        post(
            "a hidden tool, shown to an admin",
            &[("Authorization", "Bearer admin-token")],
            call("admin-reset", json!({})),
            true,
        ),
        post("a handler error (E2)", &[], call("fail", json!({})), true),
        post("a panic (E2)", &[], call("crash", json!({})), true),
        post("a ToolError", &[], call("reject", json!({})), true),
        post("a permanent error", &[], call("doom", json!({})), true),
        post(
            "a failing policy",
            &[],
            call("policy-error", json!({})),
            true,
        ),
        post(
            "a call needing approval (H6)",
            &[],
            call("restart", json!({"service_id": "prod-1"})),
            true,
        ),
        post(
            "a call not needing approval",
            &[],
            call("restart", json!({"service_id": "dev-1"})),
            true,
        ),
        post(
            "huge arguments",
            &[],
            call("greet", json!({"who": "w".repeat(200_000)})),
            true,
        ),
        post("arguments nested 100 deep", &[], nested(100), true),
        post(
            "arguments nested past the parser's limit",
            &[],
            nested(200),
            false,
        ),
    ]
}

/// A call of `greet` whose `who` is an array `depth` deep.
fn nested(depth: usize) -> Vec<u8> {
    let who = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    with_params(&format!(
        r#"{{"name":"greet","arguments":{{"who":{who}}}}}"#
    ))
}

fn envelope_cases() -> Vec<Case> {
    let mut cases = vec![
        post("malformed JSON", &[], &b"{\"jsonrpc\":\"2.0\","[..], false),
        post("an array of numbers", &[], &b"[1]"[..], false),
        post("a string body", &[], &b"\"tools/call\""[..], false),
        post("a number body", &[], &b"42"[..], false),
        post("a null body", &[], &b"null"[..], false),
        post("an empty body", &[], &b""[..], false),
        post(
            "a batch",
            &[],
            format!(
                "[{},{}]",
                String::from_utf8_lossy(&with_id("1")),
                String::from_utf8_lossy(&with_id("2"))
            ),
            false,
        ),
        post(
            "a notification",
            &[],
            &br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"greet","arguments":{"who":"x"}}}"#[..],
            false,
        ),
        post(
            "an extra member",
            &[],
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","x":1,"params":{"name":"greet","arguments":{"who":"x"}}}"#[..],
            false,
        ),
        post(
            "jsonrpc 1.0",
            &[],
            &br#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":"x"}}}"#[..],
            false,
        ),
        post(
            "no jsonrpc",
            &[],
            &br#"{"id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":"x"}}}"#[..],
            false,
        ),
        post(
            "a duplicate id",
            &[],
            &br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"greet","arguments":{"who":"x"}}}"#[..],
            false,
        ),
        post(
            "members in another order, with spaces",
            &[],
            &b" { \"params\" : {\"arguments\":{\"who\":\"x\"},\"name\":\"greet\"}, \"method\":\"tools/call\", \"id\": 4, \"jsonrpc\":\"2.0\" } "[..],
            true,
        ),
        post(
            "escapes in the method and name",
            &[],
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"gr\u0065et","arguments":{"who":"\u00e9"}}}"#[..],
            true,
        ),
    ];
    for (id, direct) in [
        (r#""abc""#, true),
        (r#""a\"b\\c\u00e9\ud83d\ude00""#, true),
        (r#""""#, true),
        ("7", true),
        ("0", true),
        ("-3", true),
        ("9007199254740993", true),
        ("9223372036854775807", true),
        ("-9223372036854775808", true),
        ("9223372036854775808", false),
        ("1.5", false),
        ("1.0", false),
        ("1e2", false),
        ("null", false),
        ("true", false),
        ("{}", false),
    ] {
        cases.push(post(&format!("the id {id}"), &[], with_id(id), direct));
    }
    cases
}

/// The params of `tools/call`: arguments of every shape, extra members, `_meta` (K6's trace
/// context, a progress token, a protocol version), a retry's `requestState`, a task.
fn params_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (params, direct) in [
        (r#"{"name":"greet"}"#, true),
        (r#"{"name":"greet","arguments":null}"#, true),
        (r#"{"name":"greet","arguments":{}}"#, true),
        (r#"{"name":"greet","arguments":[]}"#, false),
        (r#"{"name":"greet","arguments":"who"}"#, false),
        (r#"{"name":"greet","arguments":5}"#, false),
        (r#"{"arguments":{"who":"x"}}"#, false),
        (r#"{"name":5}"#, false),
        (
            r#"{"name":"greet","arguments":{"who":"x","who":"y"}}"#,
            true,
        ),
        (r#"{"name":"greet","arguments":{"who":"x"},"x":1}"#, false),
        (
            r#"{"name":"greet","arguments":{"who":"x"},"_meta":null}"#,
            true,
        ),
        (
            r#"{"name":"greet","arguments":{"who":"x"},"_meta":{}}"#,
            true,
        ),
        (
            r#"{"name":"greet","arguments":{"who":"x"},"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"k=v"}}"#,
            true,
        ),
        (
            r#"{"name":"greet","arguments":{"who":"x"},"_meta":{"traceparent":5}}"#,
            true,
        ),
        (
            r#"{"name":"greet","arguments":{"who":"x"},"_meta":{"progressToken":"p"}}"#,
            false,
        ),
        (
            r#"{"name":"greet","arguments":{"who":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
            false,
        ),
        (
            r#"{"name":"greet","arguments":{"who":"x"},"_meta":[]}"#,
            false,
        ),
        (
            r#"{"name":"greet","arguments":{"who":"x"},"requestState":"s"}"#,
            false,
        ),
        (
            r#"{"name":"greet","arguments":{"who":"x"},"task":{"ttl":1000}}"#,
            false,
        ),
    ] {
        cases.push(post(
            &format!("params {params}"),
            &[],
            with_params(params),
            direct,
        ));
    }
    cases
}

fn http_cases() -> Vec<Case> {
    let greet = call("greet", json!({"who": "x"}));
    let mut cases = Vec::new();
    for (header, value, direct) in [
        ("Accept", "", false),
        ("Accept", "application/json", false),
        ("Accept", "text/event-stream", false),
        ("Accept", "*/*", false),
        ("Accept", "text/event-stream, application/json", true),
        ("Accept", "APPLICATION/JSON,TEXT/EVENT-STREAM", true),
        ("Accept", "application/json;q=1, text/event-stream", false),
        ("Accept", "application/json, text/event-stream;q=0", false),
        ("Content-Type", "", false),
        ("Content-Type", "text/plain", false),
        ("Content-Type", "application/json; charset=utf-8", true),
        ("Content-Type", "Application/JSON", true),
        ("MCP-Protocol-Version", "2024-11-05", true),
        ("MCP-Protocol-Version", "2025-03-26", true),
        ("MCP-Protocol-Version", "2025-06-18", true),
        ("MCP-Protocol-Version", "2025-11-25", true),
        ("MCP-Protocol-Version", "2026-07-28", false),
        ("MCP-Protocol-Version", "bogus", false),
        ("MCP-Protocol-Version", " 2025-06-18", true),
        ("Mcp-Session-Id", "a-session", false),
        ("Mcp-Method", "tools/call", false),
        ("Authorization", "", false),
        ("Authorization", "Bearer forged", false),
        ("Host", "evil.example", false),
        ("Host", "LOCALHOST:1", true),
        ("Origin", "http://evil.example", false),
        ("Origin", "http://localhost:3000", true),
    ] {
        let what = format!("{header}: {value:?}");
        cases.push(post(&what, &[(header, value)], greet.clone(), direct));
    }
    let mut twice = post("two protocol versions", &[], greet.clone(), false);
    for version in ["2025-06-18", "2025-11-25"] {
        (twice.headers).push(("MCP-Protocol-Version".into(), version.into()));
    }
    cases.push(twice);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let list = serde_json::to_vec(&list).expect("JSON");
    cases.push(post("tools/list", &[], list, false));
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    cases.push(post("ping", &[], &ping[..], false));
    let initialize = serde_json::to_vec(&support::raw_http::initialize()).expect("JSON");
    cases.push(post("initialize", &[], initialize, false));
    for method in ["GET", "DELETE", "PUT"] {
        let mut other = post(method, &[], Vec::new(), false);
        other.method = method;
        cases.push(other);
    }
    cases
}

/// Sends `case` on a connection of its own and reads the answer.
async fn send(server: &HttpServer, case: &Case) -> RawResponse {
    let mut head = format!("{} /mcp HTTP/1.1\r\n", case.method);
    if !case
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("host"))
    {
        head.push_str(&format!("Host: {}\r\n", server.local_addr()));
    }
    for (name, value) in &case.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", case.body.len()));
    let mut request = head.into_bytes();
    request.extend_from_slice(&case.body);
    let mut connection = RawConnection::open(server.local_addr()).await;
    connection.send_body(&request).await;
    connection.response().await
}

/// What a client sees of an answer: status, headers but the date, and the body (as JSON
/// when it is JSON, so that member order would show).
fn seen(response: &RawResponse) -> (u16, Vec<(String, String)>, String) {
    let headers = (response.headers.iter())
        .filter(|(name, _)| name != "date")
        .cloned()
        .collect();
    (response.status, headers, response.body.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_calls_answer_exactly_as_rmcp_does() {
    let (direct, direct_seen) = server(true).await;
    let (framed, framed_seen) = server(false).await;
    let cases: Vec<Case> = (pipeline_cases().into_iter())
        .chain(envelope_cases())
        .chain(params_cases())
        .chain(http_cases())
        .collect();
    let mut answered_directly = 0;
    for case in &cases {
        let before = direct.direct_calls_answered();
        let ours = send(&direct, case).await;
        let theirs = send(&framed, case).await;
        let taken = direct.direct_calls_answered() - before;
        assert_eq!(seen(&ours), seen(&theirs), "{}", case.what);
        assert_eq!(
            taken,
            u64::from(case.direct),
            "{}: answered directly {taken} times",
            case.what
        );
        answered_directly += taken;
        let ours = std::mem::take(&mut *direct_seen.lock().expect("not poisoned"));
        let theirs = std::mem::take(&mut *framed_seen.lock().expect("not poisoned"));
        assert_eq!(ours, theirs, "{}: the outcomes observed (E3)", case.what);
    }
    assert_eq!(framed.direct_calls_answered(), 0);
    assert!(answered_directly > 40, "{answered_directly}");
    direct.shutdown().await.expect("shuts down");
    framed.shutdown().await.expect("shuts down");
}

/// A sanity check of the comparison itself: the answers it compares are the ones expected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_call_carries_the_result_its_id_and_the_outcome_kind() {
    let (server, _) = server(true).await;
    let body = with_id(r#""x-1""#);
    let answer = send(&server, &post("greet", &[], body, true)).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let message: Value = serde_json::from_str(&answer.body).expect("JSON");
    assert_eq!(message["id"], "x-1");
    assert_eq!(message["result"]["content"][0]["text"], "Hello, x!");
    assert_eq!(
        message["result"]["_meta"]["tool-runtime/outcome"],
        "success"
    );
    let fail = send(&server, &post("fail", &[], call("fail", json!({})), true)).await;
    let message: Value = serde_json::from_str(&fail.body).expect("JSON");
    assert_eq!(message["result"]["content"][0]["text"], "the tool failed");
    assert_eq!(message["result"]["isError"], true);
    assert_eq!(server.direct_calls_answered(), 2);
    server.shutdown().await.expect("shuts down");
}
