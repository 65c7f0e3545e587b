//! M7 and M3 (a resource that asks): a resource's handler asks its user through its context
//! as a tool's and a prompt's do. On protocol 2026-07-28 the question ends the
//! `resources/read` with `input_required` (the question under its key, a sealed
//! `requestState` bound to the URI, H10); the client reads again with its answer and gets the
//! contents. A state of another URI, altered, forged or replayed is `-32602`. Before
//! 2026-07-28 the question is asked during the read, on the session; a client that can answer
//! nothing is not asked.
#![cfg(feature = "mcp")]

#[path = "support/raw_pipe.rs"]
mod raw_pipe;

mod support {
    pub mod mcp;
}

use raw_pipe::{Raw as RawPipe, meta_2026};
use serde_json::{Value, json};
use tool_runtime::elicit::{ElicitAnswer, ElicitError, Elicited};
use tool_runtime::mcp::{Contents, McpServer, McpToolset, resource};
use tool_runtime::{Context, Schema, ToolError};

/// The parameters of a runbook.
#[derive(Schema)]
struct Runbook {
    /// The service identifier.
    service: String,
}

/// What the runbook asks its reader.
#[derive(Schema, Debug)]
struct Reader {
    /// Who reads it.
    name: String,
}

/// A service's runbook, addressed to whoever reads it.
#[resource(uri = "runbook://{service}", handle = RunbookResource)]
async fn runbook(ctx: Context, p: Runbook) -> Result<Contents, ToolError> {
    let asked = ctx.elicit_named::<Reader>("reader", "Who is reading?");
    let text = match asked.await {
        Ok(Elicited::Accepted(reader)) => format!("{}: runbook for {}", reader.name, p.service),
        Ok(_) => format!("runbook for {}", p.service),
        Err(ElicitError::Unsupported) => format!("runbook for {}; nobody asked", p.service),
        Err(error) => return Err(ToolError::new(format!("the question failed: {error}"))),
    };
    Ok(Contents::text(text))
}

fn server() -> McpServer {
    McpServer::builder()
        .resource(RunbookResource)
        .build()
        .expect("built")
}

/// `resources/read` of `uri` on 2026-07-28 by a client that declared elicitation, with
/// `extra` params.
async fn read(raw: &mut RawPipe, uri: &str, extra: Value) -> Value {
    let mut params = json!({"uri": uri, "_meta": meta_2026("m7", json!({"elicitation": {}}))});
    for (key, value) in extra.as_object().into_iter().flatten() {
        params[key] = value.clone();
    }
    raw.answer("resources/read", params).await
}

/// The state of the question a read of `uri` asks, checked.
async fn asked(raw: &mut RawPipe, uri: &str) -> String {
    let answer = read(raw, uri, json!({})).await;
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    assert_eq!(
        result["inputRequests"]["reader"]["method"], "elicitation/create",
        "{answer}"
    );
    (result["requestState"].as_str())
        .expect("a requestState")
        .to_owned()
}

fn answering(state: &str) -> Value {
    json!({
        "requestState": state,
        "inputResponses": {"reader": {"action": "accept", "content": {"name": "Ada"}}},
    })
}

/// M7, M3, H10 on 2026-07-28: the read asks in its answer, and once answered gives the
/// contents with the typed answer; the state is bound to its URI and counts once.
#[tokio::test]
async fn m7_a_resource_asks_its_reader_in_its_answer_and_its_state_is_sealed() {
    let mut raw = RawPipe::unopened(server());
    let state = asked(&mut raw, "runbook://db-1").await;
    let answer = read(&mut raw, "runbook://db-1", answering(&state)).await;
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(
        answer["result"]["contents"][0]["text"], "Ada: runbook for db-1",
        "{answer}"
    );
    let replayed = read(&mut raw, "runbook://db-1", answering(&state)).await;
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    let state = asked(&mut raw, "runbook://db-1").await;
    for (uri, state) in [
        ("runbook://db-2", state.clone()),
        ("runbook://db-1", format!("{state}x")),
        ("runbook://db-1", "forged".to_owned()),
    ] {
        let refused = read(&mut raw, uri, answering(&state)).await;
        assert_eq!(refused["error"]["code"], -32602, "{uri}: {refused}");
    }
}

/// M7, M3 before 2026-07-28: the resource's question is asked during the read, on the
/// session; our client's elicitor answers it. Without an elicitor nobody is asked.
#[tokio::test]
async fn m7_m3_before_2026_07_28_a_resource_asks_during_the_read() {
    for (answers, said) in [
        (true, "Ada: runbook for db-1"),
        (false, "runbook for db-1; nobody asked"),
    ] {
        let mut builder = McpToolset::builder();
        if answers {
            builder = builder.elicitor(|_message: String, _schema: Value| async move {
                Ok(ElicitAnswer::Accept(json!({"name": "Ada"})))
            });
        }
        let remote = support::mcp::connect_in_process_with(server(), builder).await;
        let contents = (remote.read_resource("runbook://db-1"))
            .await
            .expect("the contents");
        remote.close().await;
        assert_eq!(contents.texts().collect::<Vec<_>>(), [said]);
    }
}
