//! M3: elicitation both ways. A handler asks its user for typed data (`ctx.elicit::<T>()`):
//! over MCP our server sends `elicitation/create` and our client answers through the
//! application's elicitor, filling in the schema's defaults (SEP-1034); in an agent run the
//! agent's elicitor answers. The answer is parsed by `T`'s own parser: a handler never sees
//! data that breaks its type.
#![cfg(feature = "mcp")]

use serde_json::{Value, json};
use tool_runtime::mcp::{Handshake, McpServer, McpToolset};
use tool_runtime::{
    Agent, Context, ElicitAnswer, ElicitError, Elicited, Schema, ScriptedModel, ScriptedTurn, Tool,
};

/// Who to contact.
#[derive(Schema, Debug)]
struct Contact {
    /// Their name.
    #[schema(min_len = 1)]
    name: String,
    /// Their age.
    #[schema(default = 30)]
    age: u32,
}

/// Something elicitation cannot ask for: a nested object.
#[derive(Schema, Debug)]
struct Nested {
    /// A contact.
    contact: Contact,
}

/// The empty input.
#[derive(Schema)]
struct NoInput {}

fn ask_tool() -> Tool {
    Tool::builder("ask-contact", "Asks the user who to contact.")
        .handler(|ctx: Context, _: NoInput| async move {
            let text = match ctx.elicit::<Contact>("Who should be told?").await {
                Ok(Elicited::Accepted(contact)) => format!("{} ({})", contact.name, contact.age),
                Ok(Elicited::Declined) => "declined".to_owned(),
                Ok(Elicited::Cancelled) => "cancelled".to_owned(),
                Err(ElicitError::Unsupported) => "nobody to ask".to_owned(),
                Err(ElicitError::Invalid { violations, .. }) => {
                    format!("invalid at {}", violations[0].path)
                }
                Err(e) => format!("failed: {e}"),
            };
            Ok::<_, std::io::Error>(text)
        })
        .build()
}

fn nested_tool() -> Tool {
    Tool::builder("ask-nested", "Asks for a nested object.")
        .handler(|ctx: Context, _: NoInput| async move {
            let text = match ctx.elicit::<Nested>("Nested?").await {
                Err(ElicitError::Schema { reason, .. }) => format!("refused: {reason}"),
                other => format!("unexpected: {other:?}"),
            };
            Ok::<_, std::io::Error>(text)
        })
        .build()
}

/// Our server and our client in process, the client answering with `answer`.
async fn call_over_mcp(tool: &str, answer: Option<Value>) -> String {
    call_over_mcp_at(Handshake::Initialize, tool, answer).await
}

/// As [`call_over_mcp`], on the protocol `handshake` opens.
async fn call_over_mcp_at(handshake: Handshake, tool: &str, answer: Option<Value>) -> String {
    let server = McpServer::builder()
        .tool(ask_tool())
        .tool(nested_tool())
        .build()
        .expect("built");
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    let mut builder = McpToolset::builder().handshake(handshake);
    if let Some(answer) = answer {
        builder = builder.elicitor(move |message: String, schema: Value| {
            let answer = answer.clone();
            async move {
                assert_eq!(message, "Who should be told?");
                // The requested schema is the type's, with its default.
                assert_eq!(schema["properties"]["age"]["default"], 30);
                Ok(match answer {
                    Value::String(s) if s == "decline" => ElicitAnswer::Decline,
                    other => ElicitAnswer::Accept(other),
                })
            }
        });
    }
    let remote = builder
        .connect_io(client_read, client_write)
        .await
        .expect("connected");
    let tool = remote
        .tools()
        .iter()
        .find(|t| t.name() == tool)
        .cloned()
        .expect("listed");
    let outcome = tool.invoke(&Context::new(), b"{}").await;
    remote.close().await;
    serde_json::from_str::<String>(outcome.text()).unwrap_or_else(|_| outcome.text().to_owned())
}

#[tokio::test]
async fn m3_a_handler_asks_over_mcp_and_gets_a_typed_answer_with_defaults() {
    assert_eq!(
        call_over_mcp("ask-contact", Some(json!({"name": "Ada"}))).await,
        "Ada (30)"
    );
    assert_eq!(
        call_over_mcp("ask-contact", Some(json!({"name": "Ada", "age": 36}))).await,
        "Ada (36)"
    );
    assert_eq!(
        call_over_mcp("ask-contact", Some(json!("decline"))).await,
        "declined"
    );
}

#[tokio::test]
async fn m3_an_answer_that_breaks_the_type_never_reaches_the_handler_as_data() {
    assert_eq!(
        call_over_mcp("ask-contact", Some(json!({"name": "", "age": "old"}))).await,
        "invalid at /age"
    );
}

#[tokio::test]
async fn m3_a_client_without_an_elicitor_is_not_asked() {
    assert_eq!(call_over_mcp("ask-contact", None).await, "nobody to ask");
}

#[tokio::test]
async fn m3_a_type_elicitation_cannot_ask_for_is_refused_before_asking() {
    let text = call_over_mcp("ask-nested", Some(json!({}))).await;
    assert!(text.starts_with("refused:"), "{text}");
}

#[tokio::test]
async fn m3_in_an_agent_run_the_agents_elicitor_answers() {
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "ask-contact", "{}"),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(ask_tool())
        .elicitor(|_message: String, _schema: Value| async move {
            Ok(ElicitAnswer::Accept(json!({"name": "Grace"})))
        })
        .build()
        .expect("built");
    let out = agent
        .run(&Context::new(), "Tell someone.")
        .await
        .expect("runs");
    assert_eq!(out.calls[0].text(), "Grace (30)");
    // Without an elicitor, nobody is asked.
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "ask-contact", "{}"),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(ask_tool())
        .build()
        .expect("built");
    let out = agent
        .run(&Context::new(), "Tell someone.")
        .await
        .expect("runs");
    assert_eq!(out.calls[0].text(), "nobody to ask");
}

/// M3 on protocol 2026-07-28: the server cannot ask during a call, so the handler's question
/// goes back in the answer (`input_required`); our client answers it through its elicitor and
/// calls again, and the handler, run again, gets the answer to the question it asked before.
#[tokio::test]
async fn m3_on_2026_07_28_a_handlers_question_goes_back_in_the_answer() {
    let at = |answer| call_over_mcp_at(Handshake::Discover, "ask-contact", answer);
    assert_eq!(at(Some(json!({"name": "Ada"}))).await, "Ada (30)");
    assert_eq!(at(Some(json!("decline"))).await, "declined");
    assert_eq!(
        at(Some(json!({"name": "", "age": "old"}))).await,
        "invalid at /age"
    );
    assert_eq!(at(None).await, "nobody to ask");
    let nested = call_over_mcp_at(Handshake::Discover, "ask-nested", Some(json!({}))).await;
    assert!(nested.starts_with("refused:"), "{nested}");
}
