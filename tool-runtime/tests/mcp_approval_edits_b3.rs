//! B3 over MCP: a server built with `approval_edits(true)` lets the client's user edit a call's
//! arguments when asked to approve it, as far as an elicitation form can carry them (each
//! top-level string, number or boolean argument, the model's value its default). The edited
//! arguments are validated again before anything runs (S2), the handler gets them, and an
//! answer that sets a field the form did not offer, or a value of another type, is not
//! approved. Spoken as a 2026-07-28 client speaks it, in raw JSON-RPC over streamable HTTP to a
//! stateless server: the question comes as an `input_required` answer, and the retry brings
//! the sealed state back with the user's answer (H10). The official MCP Python SDK's client
//! (`tests/support/mcp/approval_edits_client.py`) edits the same way over stdio, both during
//! the call (`elicitation/create`) and by calling again (2026-07-28).
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
    pub mod raw_http;
}

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::raw_http::RawConnection;
use tool_runtime::elicit::Elicited;
use tool_runtime::mcp::{HttpOptions, HttpServer, McpServer};
use tool_runtime::{Context, NOT_APPROVED, Schema, Tool};

/// A transfer of money.
#[derive(Schema, Debug)]
struct Transfer {
    /// The account to pay.
    #[schema(pattern = "^[a-z0-9-]+$")]
    to: String,
    /// How much, in cents.
    #[schema(min = 1, max = 100000)]
    cents: u64,
    /// Whether the payment goes out today.
    urgent: bool,
    /// Labels for the ledger: a list, which a form cannot carry.
    tags: Vec<String>,
}

/// A memo for the ledger.
#[derive(Schema, Debug)]
struct Memo {
    /// The memo.
    memo: String,
}

/// A server whose `transfer` always needs approval; what its handler got.
struct Served {
    http: HttpServer,
    paid: Arc<Mutex<Vec<String>>>,
}

impl Served {
    fn paid(&self) -> Vec<String> {
        self.paid.lock().expect("not poisoned").clone()
    }
}

/// The server's `transfer`, which always needs approval, and what its handler got.
fn server(edits: bool) -> (McpServer, Arc<Mutex<Vec<String>>>) {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let ledger = Arc::clone(&paid);
    let transfer = Tool::builder("transfer", "Pays an account.")
        .require_approval()
        .handler(move |_ctx: Context, t: Transfer| {
            let line = format!("{}:{}:{}:{}", t.to, t.cents, t.urgent, t.tags.join("+"));
            ledger.lock().expect("not poisoned").push(line);
            async move { Ok::<_, std::io::Error>(format!("paid {} cents to {}", t.cents, t.to)) }
        })
        .build();
    let ledger = Arc::clone(&paid);
    let noted = Tool::builder(
        "transfer-noted",
        "Pays an account, with a memo the user gives.",
    )
    .require_approval()
    .handler(move |ctx: Context, t: Transfer| {
        let ledger = Arc::clone(&ledger);
        async move {
            // Without a memo nothing is paid (a question that ends the call's round is
            // answered as cancelled here).
            let memo = match ctx.elicit_named::<Memo>("memo", "A memo?").await {
                Ok(Elicited::Accepted(memo)) => memo.memo,
                _ => return Err(std::io::Error::other("no memo, no payment")),
            };
            let line = format!("{}:{}:{memo}", t.to, t.cents);
            ledger.lock().expect("not poisoned").push(line);
            Ok::<_, std::io::Error>(format!("paid {} cents to {} ({memo})", t.cents, t.to))
        }
    })
    .build();
    let server = McpServer::builder()
        .tool(transfer)
        .tool(noted)
        .state_key(b"b3 test key: thirty-two bytes or more of secret".as_slice())
        .approval_edits(edits)
        .build()
        .expect("the tools are declared right");
    (server, paid)
}

async fn serve(edits: bool) -> Served {
    let (server, paid) = server(edits);
    let http = server
        .bind_http("127.0.0.1:0", HttpOptions::new().stateless().json_answers())
        .await
        .expect("a loopback port is free");
    Served { http, paid }
}

fn asked() -> Value {
    json!({"to": "acme", "cents": 90000, "urgent": false, "tags": ["q4"]})
}

/// A `tools/call` of `transfer` with `arguments`; `retry`: the state brought back and the
/// user's answer (`action`, `content`).
async fn call(served: &Served, arguments: &Value, retry: Option<(&str, Value)>) -> Value {
    call_tool(served, "transfer", arguments, retry).await
}

/// A `tools/call` of `tool`, as [`call`] makes one.
async fn call_tool(
    served: &Served,
    tool: &str,
    arguments: &Value,
    retry: Option<(&str, Value)>,
) -> Value {
    let mut params = json!({
        "name": tool,
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "b3-raw-client", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        },
    });
    if let Some((state, answer)) = retry {
        params["requestState"] = json!(state);
        params["inputResponses"] = if state.starts_with("tre.") {
            answer
        } else {
            json!({ "tool-runtime/approval": answer })
        };
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let mut connection = RawConnection::open(served.http.local_addr()).await;
    let headers = [
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool),
    ];
    let response = connection.post(&headers, &body).await;
    assert_eq!(response.status, 200, "{response:?}");
    let answer = response.messages().pop().expect("one answer");
    answer["result"].clone()
}

/// The question of a first call: its form, and its sealed state.
async fn question(served: &Served) -> (Value, String) {
    let result = call(served, &asked(), None).await;
    assert_eq!(result["resultType"], "input_required", "{result}");
    let params = &result["inputRequests"]["tool-runtime/approval"]["params"];
    let state = result["requestState"].as_str().expect("a state").to_owned();
    (params["requestedSchema"].clone(), state)
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b3_the_approval_form_offers_the_calls_primitive_arguments_with_the_models_values() {
    let served = serve(true).await;
    let (form, _) = question(&served).await;
    let fields = &form["properties"];
    assert_eq!(fields["to"]["type"], "string", "{form}");
    assert_eq!(fields["to"]["default"], "acme", "{form}");
    assert_eq!(fields["to"]["description"], "The account to pay.", "{form}");
    assert_eq!(fields["cents"]["type"], "integer", "{form}");
    assert_eq!(fields["cents"]["default"], 90000, "{form}");
    assert_eq!(fields["urgent"]["type"], "boolean", "{form}");
    assert_eq!(fields["urgent"]["default"], false, "{form}");
    // A list cannot be a form's field: it stays as the model sent it.
    assert!(fields.get("tags").is_none(), "{form}");
    assert!(served.paid().is_empty(), "a question runs nothing");
    // Without edits, the question asks yes or no.
    let plain = serve(false).await;
    let (form, _) = question(&plain).await;
    assert_eq!(form["properties"], json!({}), "{form}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b3_approved_with_edits_the_handler_gets_the_edited_arguments() {
    let served = serve(true).await;
    let (_, state) = question(&served).await;
    let answer = accept(json!({"cents": 500, "urgent": true, "to": "acme"}));
    let result = call(&served, &asked(), Some((&state, answer))).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["content"][0]["text"], "paid 500 cents to acme",
        "{result}"
    );
    assert_eq!(served.paid(), ["acme:500:true:q4"]);
    // An accept that changes nothing runs the call as asked.
    let (_, state) = question(&served).await;
    let result = call(&served, &asked(), Some((&state, accept(json!({}))))).await;
    assert_eq!(
        result["content"][0]["text"], "paid 90000 cents to acme",
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b3_s2_edits_that_break_the_schema_run_nothing() {
    let served = serve(true).await;
    for bad in [json!({"cents": 0}), json!({"to": "Not An Account!"})] {
        let (_, state) = question(&served).await;
        let result = call(&served, &asked(), Some((&state, accept(bad.clone())))).await;
        assert_eq!(result["isError"], true, "{bad}: {result}");
        assert_eq!(
            result["_meta"]["tool-runtime/outcome"], "invalid_arguments",
            "{bad}: {result}"
        );
    }
    assert!(served.paid().is_empty(), "{:?}", served.paid());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b3_h10_an_edit_the_form_did_not_offer_or_of_another_type_is_not_approved() {
    let served = serve(true).await;
    for bad in [
        json!({"tags": ["other"]}),
        json!({"cents": "500"}),
        json!({"cents": 1.5}),
        json!({"owner": "mallory"}),
        json!(["cents", 500]),
    ] {
        let (_, state) = question(&served).await;
        let result = call(&served, &asked(), Some((&state, accept(bad.clone())))).await;
        assert_eq!(result["isError"], true, "{bad}: {result}");
        assert_eq!(
            result["content"][0]["text"], NOT_APPROVED,
            "{bad}: {result}"
        );
    }
    // A server that offers no edits ignores an answer's content: the call runs as asked.
    let plain = serve(false).await;
    let (_, state) = question(&plain).await;
    let result = call(
        &plain,
        &asked(),
        Some((&state, accept(json!({"cents": 5})))),
    )
    .await;
    assert_eq!(
        result["content"][0]["text"], "paid 90000 cents to acme",
        "{result}"
    );
    assert!(served.paid().is_empty(), "{:?}", served.paid());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b3_the_official_python_client_edits_during_the_call_and_by_calling_again() {
    for mode in ["legacy", "auto"] {
        let (server, paid) = server(true);
        let run =
            support::mcp::run_python_client(server, "approval_edits_client.py", &[mode.into()])
                .await;
        let report = &run.report;
        assert!(
            run.success,
            "the Python client's checks failed ({mode}):\n{report}"
        );
        assert!(report.contains("all checks passed"), "{report}");
        assert_eq!(
            *paid.lock().expect("not poisoned"),
            ["acme:500:false:q4"],
            "{mode}"
        );
        let _ = tokio::time::timeout(std::time::Duration::from_secs(10), run.serving).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b3_h10_edited_arguments_stay_the_calls_through_a_later_question_round() {
    let served = serve(true).await;
    let asked = asked();
    // The approval question, answered with an edit.
    let first = call_tool(&served, "transfer-noted", &asked, None).await;
    let state = first["requestState"].as_str().expect("a state").to_owned();
    let answer = accept(json!({"cents": 500}));
    let second = call_tool(&served, "transfer-noted", &asked, Some((&state, answer))).await;
    // The handler, approved with the edit, asks its memo in a round of its own.
    assert_eq!(second["resultType"], "input_required", "{second}");
    assert!(second["inputRequests"]["memo"].is_object(), "{second}");
    assert!(
        served.paid().is_empty(),
        "nothing paid before the memo: {:?} {second}",
        served.paid()
    );
    let round = second["requestState"].as_str().expect("a state").to_owned();
    let memo = json!({"memo": {"action": "accept", "content": {"memo": "q4 close"}}});
    let third = call_tool(&served, "transfer-noted", &asked, Some((&round, memo))).await;
    // The retry carries the model's arguments; the call runs with the user's edit.
    assert_eq!(
        third["content"][0]["text"], "paid 500 cents to acme (q4 close)",
        "{third}"
    );
    assert_eq!(served.paid(), ["acme:500:q4 close"]);
}
