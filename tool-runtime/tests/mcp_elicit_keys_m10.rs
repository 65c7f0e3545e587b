//! M10: a handler names its question (`ctx.elicit_named::<T>("user_name", …)`), and on
//! 2026-07-28 that name is the key of the input request the server sends back in its answer
//! (`inputRequests`), the key the client answers under (`inputResponses`). An unnamed question
//! keeps the server's own key; a name that breaks the rules, takes the form of the server's own
//! keys (`question-N`), or names another question of the call, is refused to the handler.
#![cfg(feature = "mcp")]

use rmcp::model::{CallToolRequestParams, CallToolResponse, ClientCapabilities, InputResponses};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use tool_runtime::mcp::McpServer;
use tool_runtime::{Context, ElicitError, Elicited, Schema, Tool};

/// Who is asking.
#[derive(Schema, Debug)]
struct UserName {
    /// Their name.
    name: String,
}

/// The empty input.
#[derive(Schema)]
struct NoInput {}

/// A tool that asks one question named `key` (unnamed when `None`), and one that asks two
/// questions under one name.
fn asking(tool: &'static str, key: Option<&'static str>) -> Tool {
    Tool::builder(tool, "Greets whoever answers.")
        .handler(move |ctx: Context, _: NoInput| async move {
            let asked = match key {
                Some(key) => ctx.elicit_named::<UserName>(key, "Who are you?").await,
                None => ctx.elicit::<UserName>("Who are you?").await,
            };
            let text = match asked {
                Ok(Elicited::Accepted(user)) => format!("Hello, {}!", user.name),
                Ok(other) => format!("no name: {other:?}"),
                Err(ElicitError::Key { reason, .. }) => format!("bad key: {reason}"),
                Err(other) => format!("failed: {other}"),
            };
            Ok::<_, std::io::Error>(text)
        })
        .build()
}

fn twice() -> Tool {
    Tool::builder("twice", "Asks two questions under one name.")
        .handler(|ctx: Context, _: NoInput| async move {
            let _ = ctx.elicit_named::<UserName>("who", "Who are you?").await;
            let again = ctx.elicit_named::<UserName>("who", "Who else?").await;
            Ok::<_, std::io::Error>(match again {
                Err(ElicitError::Key { reason, .. }) => format!("bad key: {reason}"),
                other => format!("unexpected: {other:?}"),
            })
        })
        .build()
}

/// The SDK's client on 2026-07-28 over a pipe, able to answer questions.
async fn client(server: McpServer) -> RunningService<RoleClient, rmcp::model::ClientConfig> {
    use rmcp::ClientServiceExt as _;
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let capabilities: ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {"form": {}}})).expect("capabilities");
    let info = rmcp::model::ClientConfig::new(
        capabilities,
        rmcp::model::Implementation::new("m10-sdk", "0"),
    );
    let lifecycle = rmcp::service::ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
    };
    info.serve_with_lifecycle(tokio::io::split(client_io), lifecycle)
        .await
        .expect("the SDK's client connects")
}

/// Calls `tool`; answers its one question (checking it is keyed `key`) with `name` under
/// `answer_key`; the final text.
async fn ask(
    client: &RunningService<RoleClient, rmcp::model::ClientConfig>,
    tool: &str,
    key: &str,
    answer_key: &str,
) -> String {
    let call = CallToolRequestParams::new(tool.to_owned());
    let first = (client.peer().call_tool_once(call.clone()).await).expect("answers");
    let CallToolResponse::InputRequired(input) = first else {
        panic!("a question: {first:?}");
    };
    let keys: Vec<&String> = input
        .input_requests
        .iter()
        .flatten()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, [key], "{input:?}");
    let mut again = call;
    again.input_responses = Some(InputResponses::from([(
        answer_key.to_owned(),
        json!({"action": "accept", "content": {"name": "Ada"}}),
    )]));
    again.request_state = input.request_state;
    let answer = (client.peer().call_tool_once(again).await).expect("answers");
    let CallToolResponse::Complete(result) = answer else {
        panic!("a result: {answer:?}");
    };
    let value = serde_json::to_value(&result).expect("JSON");
    value["content"][0]["text"]
        .as_str()
        .map(|text| serde_json::from_str::<String>(text).unwrap_or_else(|_| text.to_owned()))
        .unwrap_or_else(|| panic!("a text: {value}"))
}

/// M10: the handler's name is the input request's key, and the answer under it reaches the
/// handler; an unnamed question is keyed by the server (`question-0`); an answer under
/// another key is no answer.
#[tokio::test]
async fn m10_a_handler_names_its_input_request() {
    let server = McpServer::builder()
        .tool(asking("named", Some("user_name")))
        .tool(asking("unnamed", None))
        .tool(asking("badly-named", Some("user name?")))
        .tool(asking("server-named", Some("question-1")))
        .tool(twice())
        .build()
        .expect("built");
    let client = client(server).await;
    assert_eq!(
        ask(&client, "named", "user_name", "user_name").await,
        "Hello, Ada!"
    );
    assert_eq!(
        ask(&client, "unnamed", "question-0", "question-0").await,
        "Hello, Ada!"
    );
    let unanswered = ask(&client, "named", "user_name", "question-0").await;
    assert!(unanswered.starts_with("no name"), "{unanswered}");

    // A name of the form unnamed questions get could give two questions one key.
    let cases = [
        ("badly-named", "ASCII"),
        ("server-named", "unnamed questions"),
        ("twice", "another question"),
    ];
    for (tool, why) in cases {
        let answer = (client.peer())
            .call_tool_once(CallToolRequestParams::new(tool))
            .await;
        let text = match answer {
            Ok(CallToolResponse::Complete(result)) => serde_json::to_value(&result)
                .map(|v| v["content"][0]["text"].clone())
                .unwrap_or(Value::Null),
            Ok(CallToolResponse::InputRequired(input)) if tool == "twice" => {
                // The first question is asked; answered, the second one's name is refused.
                let mut again = CallToolRequestParams::new(tool);
                again.input_responses = Some(InputResponses::from([(
                    "who".to_owned(),
                    json!({"action": "accept", "content": {"name": "Ada"}}),
                )]));
                again.request_state = input.request_state;
                let answer = (client.peer().call_tool_once(again).await).expect("answers");
                let CallToolResponse::Complete(result) = answer else {
                    panic!("a result: {answer:?}");
                };
                serde_json::to_value(&result).expect("JSON")["content"][0]["text"].clone()
            }
            other => panic!("{tool}: {other:?}"),
        };
        assert!(
            text.as_str()
                .is_some_and(|t| t.contains("bad key") && t.contains(why)),
            "{tool}: {text}"
        );
    }
}
