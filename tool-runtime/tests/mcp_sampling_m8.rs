//! M8: a handler asks the client's model (`ctx.sample`) and reads its roots (`ctx.roots`).
//! Served by our `McpServer` to the SDK's (rmcp's) client with sampling and roots handlers:
//! before 2026-07-28 as `sampling/createMessage` and `roots/list` requests during the call, on
//! 2026-07-28 in the call's answer (`input_required`), which the SDK's client answers and
//! calls again. A client that declared neither is asked nothing, and the handler is told so;
//! an answer of the wrong shape, or too large, is a clear error. In an agent run the
//! application's sampler and roots answer, or the run's own model.
#![cfg(feature = "mcp")]
#![allow(deprecated)]

use rmcp::handler::client::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, CreateMessageRequestParams,
    CreateMessageResult, ErrorData, InputResponses, ListRootsResult, ProtocolVersion, Role,
    SamplingMessage, SamplingMessageContentBlock,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use serde_json::json;
use tool_runtime::mcp::McpServer;
use tool_runtime::roots::Root;
use tool_runtime::sampling::{SampleError, SamplingAnswer, SamplingRequest};
use tool_runtime::{Agent, Context, Schema, ScriptedModel, ScriptedTurn, Tool};

/// The empty input.
#[derive(Schema)]
struct NoInput {}

/// Asks the capital of France, then reads the roots; says what it got.
fn sample_and_roots() -> Tool {
    Tool::builder("capital", "Asks the client's model, then reads its roots.")
        .handler(|ctx: Context, _: NoInput| async move {
            let request = SamplingRequest::new("What is the capital of France?", 100)
                .with_system_prompt("Answer in one word.");
            let sampled = match ctx.sample_named("capital", request).await {
                Ok(answer) => format!("{} ({})", answer.text, answer.model),
                Err(error) => format!("sample failed: {error}"),
            };
            let roots = match ctx.roots_named("client_roots").await {
                Ok(roots) => (roots.iter().map(|root| root.uri.as_str()))
                    .collect::<Vec<_>>()
                    .join(","),
                Err(error) => format!("roots failed: {error}"),
            };
            Ok::<_, std::io::Error>(format!("{sampled} | {roots}"))
        })
        .build()
}

/// What the SDK's client answers a sampling request with.
#[derive(Clone)]
enum Answer {
    /// The text, checking the request was the handler's.
    Text(&'static str),
    /// An image instead of text.
    Image,
    /// This many bytes of text.
    Huge(usize),
}

/// The SDK's client: declares sampling and roots when `declare`, answers as `answer`.
#[derive(Clone)]
struct Client {
    declare: bool,
    answer: Answer,
}

impl ClientHandler for Client {
    fn get_info(&self) -> rmcp::model::ClientInfo {
        let capabilities: ClientCapabilities = if self.declare {
            serde_json::from_value(json!({"sampling": {}, "roots": {}})).expect("capabilities")
        } else {
            ClientCapabilities::default()
        };
        rmcp::model::ClientInfo::new(capabilities, rmcp::model::Implementation::new("m8", "0"))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let asked = params.messages[0].content.first().and_then(|c| c.as_text());
        assert_eq!(
            asked.map(|text| text.text.as_str()),
            Some("What is the capital of France?")
        );
        assert_eq!(params.max_tokens, 100);
        assert_eq!(params.system_prompt.as_deref(), Some("Answer in one word."));
        let content = match &self.answer {
            Answer::Text(text) => SamplingMessageContentBlock::text(*text),
            Answer::Huge(size) => SamplingMessageContentBlock::text("x".repeat(*size)),
            Answer::Image => serde_json::from_value(
                json!({"type": "image", "data": "AA==", "mimeType": "image/png"}),
            )
            .expect("an image"),
        };
        let message = SamplingMessage::new(Role::Assistant, content);
        Ok(CreateMessageResult::new(message, "test-model".into()).with_stop_reason("endTurn"))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(vec![
            rmcp::model::Root::new("file:///work").with_name("work"),
            rmcp::model::Root::new("file:///home/ada"),
        ]))
    }
}

/// Our server, and the SDK's client connected to it over a pipe on `version` (before
/// 2026-07-28: `initialize`; on 2026-07-28: discovery).
async fn connect(client: Client, modern: bool) -> RunningService<RoleClient, Client> {
    use rmcp::{ClientServiceExt as _, ServiceExt as _};
    let server = McpServer::builder()
        .tool(sample_and_roots())
        .build()
        .expect("built");
    let (client_io, server_io) = tokio::io::duplex(1 << 22);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    if modern {
        let lifecycle = rmcp::service::ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        client
            .serve_with_lifecycle(tokio::io::split(client_io), lifecycle)
            .await
            .expect("connects")
    } else {
        client
            .serve(tokio::io::split(client_io))
            .await
            .expect("connects")
    }
}

/// The text of a call's result.
fn text_of(result: &rmcp::model::CallToolResult) -> String {
    let value = serde_json::to_value(result).expect("JSON");
    let text = value["content"][0]["text"].as_str().unwrap_or_default();
    serde_json::from_str::<String>(text).unwrap_or_else(|_| text.to_owned())
}

/// Calls `capital` as the SDK's client does, answering every round.
async fn call(client: Client, modern: bool) -> String {
    let service = connect(client, modern).await;
    let result = service
        .call_tool(CallToolRequestParams::new("capital"))
        .await
        .expect("answers");
    service.cancel().await.ok();
    text_of(&result)
}

/// M8: the handler's request reaches the client's model and its answer the handler, and the
/// client's roots too, on each protocol version: during the call before 2026-07-28, in input
/// rounds on 2026-07-28.
#[tokio::test]
async fn m8_a_handler_samples_and_reads_roots_on_each_protocol_version() {
    for modern in [false, true] {
        let client = Client {
            declare: true,
            answer: Answer::Text("Paris"),
        };
        assert_eq!(
            call(client, modern).await,
            "Paris (test-model) | file:///work,file:///home/ada",
            "modern: {modern}"
        );
    }
}

/// M8: a client that declared neither sampling nor roots is asked nothing; the handler is told
/// the client cannot sample and there is no roots capability.
#[tokio::test]
async fn m8_a_client_without_the_capabilities_is_not_asked() {
    for modern in [false, true] {
        let client = Client {
            declare: false,
            answer: Answer::Text("never asked"),
        };
        let text = call(client, modern).await;
        assert_eq!(
            text,
            format!(
                "sample failed: {} | roots failed: {}",
                SampleError::Unsupported,
                tool_runtime::roots::RootsError::Unsupported
            ),
            "modern: {modern}"
        );
    }
}

/// M8: an answer that is not text, or is larger than a handler is given, is a clear error to
/// the handler, and the server goes on serving.
#[tokio::test]
async fn m8_hostile_sampling_answers_during_the_call_are_clear_errors() {
    let image = call(
        Client {
            declare: true,
            answer: Answer::Image,
        },
        false,
    )
    .await;
    assert!(
        image.starts_with("sample failed: the sampling answer is not one a handler can take"),
        "{image}"
    );
    let huge = call(
        Client {
            declare: true,
            answer: Answer::Huge(tool_runtime::sampling::MAX_ANSWER_BYTES + 1),
        },
        false,
    )
    .await;
    assert!(
        huge.starts_with("sample failed: the sampling answer is larger"),
        "{huge}"
    );
}

/// M8 on 2026-07-28: answers of the wrong shape brought back in the input responses are clear
/// errors to the handler; a forged state is refused and nothing runs.
#[tokio::test]
async fn m8_hostile_input_responses_are_clear_errors_and_states_stay_sealed() {
    let client = Client {
        declare: true,
        answer: Answer::Text("unused"),
    };
    let service = connect(client, true).await;
    let peer = service.peer();
    let call = CallToolRequestParams::new("capital");
    let first = peer.call_tool_once(call.clone()).await.expect("answers");
    let CallToolResponse::InputRequired(input) = first else {
        panic!("a sampling request: {first:?}");
    };
    let request = serde_json::to_value(&input.input_requests).expect("JSON");
    assert_eq!(request["capital"]["method"], "sampling/createMessage");
    let mut again = call.clone();
    again.input_responses = Some(InputResponses::from([(
        "capital".to_owned(),
        json!({"role": "assistant", "content": 5, "model": "m"}),
    )]));
    again.request_state = input.request_state.clone();
    let second = peer.call_tool_once(again.clone()).await.expect("answers");
    let CallToolResponse::InputRequired(roots) = second else {
        panic!("a roots request: {second:?}");
    };
    let mut third = call.clone();
    third.input_responses = Some(InputResponses::from([(
        "client_roots".to_owned(),
        json!({"roots": [{"uri": ""}]}),
    )]));
    third.request_state = roots.request_state;
    let done = peer.call_tool_once(third).await.expect("answers");
    let CallToolResponse::Complete(result) = done else {
        panic!("a result: {done:?}");
    };
    let text = text_of(&result);
    assert!(
        text.starts_with("sample failed: the sampling answer is not one a handler can take")
            && text.contains("| roots failed: the client's roots are not ones"),
        "{text}"
    );
    // H10: the first state again (replayed), and an altered one, are refused.
    let replayed = peer.call_tool_once(again).await;
    assert!(replayed.is_err(), "{replayed:?}");
    let mut forged = call;
    forged.request_state = input.request_state.map(|state| format!("{state}x"));
    assert!(peer.call_tool_once(forged).await.is_err());
    service.cancel().await.ok();
}

/// M8 in an agent run: the application's sampler answers and its roots are read; or the run's
/// own model answers when the application says so; and without either, the handler is told.
#[tokio::test]
async fn m8_in_an_agent_run_the_applications_sampler_and_roots_answer() {
    let script = |extra: Option<&'static str>| {
        let mut turns = vec![ScriptedTurn::new().call("c1", "capital", "{}")];
        turns.extend(extra.map(ScriptedTurn::reply));
        turns.push(ScriptedTurn::reply("done"));
        ScriptedModel::new(turns)
    };
    let agent = Agent::builder(script(None))
        .tool(sample_and_roots())
        .sampler(|request: SamplingRequest| async move {
            assert_eq!(request.messages[0].text, "What is the capital of France?");
            Ok(SamplingAnswer {
                text: "Paris".into(),
                model: "app".into(),
                stop_reason: None,
            })
        })
        .roots(vec![Root::new("file:///work").with_name("work")])
        .build()
        .expect("built");
    let out = agent.run(&Context::new(), "Ask.").await.expect("runs");
    assert_eq!(out.calls[0].text(), "Paris (app) | file:///work");

    // The run's own model answers: its next scripted turn is the sampling answer.
    let agent = Agent::builder(script(Some("Lyon")))
        .tool(sample_and_roots())
        .sample_with_own_model()
        .build()
        .expect("built");
    let out = agent.run(&Context::new(), "Ask.").await.expect("runs");
    let text = out.calls[0].text();
    assert!(text.starts_with("Lyon ("), "{text}");
    assert!(text.ends_with("| roots failed: no roots capability: the client declared no roots, or the agent was given none"), "{text}");

    let agent = Agent::builder(script(None))
        .tool(sample_and_roots())
        .build()
        .expect("built");
    let out = agent.run(&Context::new(), "Ask.").await.expect("runs");
    assert!(
        out.calls[0]
            .text()
            .starts_with("sample failed: the client cannot sample"),
        "{}",
        out.calls[0].text()
    );
}
