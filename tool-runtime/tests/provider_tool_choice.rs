//! L3: a run's tool choice reaches every driver in its provider's wire form, on the first
//! request only unless the run asks for every turn (whole agent runs against a local server
//! that answers with each provider's real payload shapes).

#![cfg(all(feature = "openai", feature = "anthropic"))]

mod support {
    pub mod provider;
}

use serde_json::{Value, json};
use support::provider::scenario::{tag_service, test_agent};
use support::provider::{Reply, Server, anthropic_answer, chat_answer, responses_answer};
use tool_runtime::RunRequest;
use tool_runtime::providers::anthropic::Anthropic;
use tool_runtime::providers::openai::{OpenAiChat, OpenAiResponses};
use tool_runtime::{Agent, Context, Model, RunOptions, ToolChoice};

/// Runs `agent` with `choice` (and every turn, if asked) to one answer and returns each
/// request's `tool_choice` (`Null` when not sent) and the names of the tools it advertised.
async fn choices(agent: &Agent, server: &Server, options: RunOptions) -> Vec<(Value, Vec<String>)> {
    agent
        .execute(
            &Context::new(),
            RunRequest::new("Tag svc-42.").options(options),
        )
        .await
        .expect("the run answers");
    server
        .requests()
        .iter()
        .map(|request| {
            let body = request.json();
            let names = body["tools"]
                .as_array()
                .map(|tools| {
                    tools
                        .iter()
                        .map(|t| {
                            t.pointer("/function/name")
                                .or_else(|| t.get("name"))
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned()
                        })
                        .collect()
                })
                .unwrap_or_default();
            (
                body.get("tool_choice").cloned().unwrap_or(Value::Null),
                names,
            )
        })
        .collect()
}

/// A turn that calls `tag-service`, in each API's stream shape, then the final answer.
fn chat_turns() -> [Reply; 2] {
    let call = concat!(
        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"tag-service\",\"arguments\":\"{\\\"service_id\\\":\\\"svc-42\\\",\\\"labels\\\":[\\\"db\\\"]}\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    [Reply::sse(call), Reply::sse(chat_answer("Tagged."))]
}

async fn model_for(api: &str, server: &Server) -> Box<dyn Model> {
    match api {
        "chat" => Box::new(
            OpenAiChat::builder()
                .api_key("sk-test")
                .base_url(server.url())
                .model("gpt-test")
                .build()
                .expect("valid"),
        ),
        "compatible" => Box::new(
            OpenAiChat::compatible(format!("{}/v1", server.url()))
                .model("local")
                .build()
                .expect("valid"),
        ),
        "responses" => Box::new(
            OpenAiResponses::builder()
                .api_key("sk-test")
                .base_url(server.url())
                .model("gpt-test")
                .build()
                .expect("valid"),
        ),
        _ => Box::new(
            Anthropic::builder()
                .api_key("sk-ant-test")
                .base_url(server.url())
                .model("claude-test")
                .max_tokens(100)
                .build()
                .expect("valid"),
        ),
    }
}

#[tokio::test]
async fn l3_each_driver_sends_the_runs_choice_in_its_own_form_on_the_first_request() {
    let named = ToolChoice::Tool("tag-service".into());
    // (driver, first request's `tool_choice` for a named tool, for `required`, for `none`)
    let cases: [(&str, Value, Value, Value); 4] = [
        (
            "chat",
            json!({"type": "function", "function": {"name": "tag-service"}}),
            json!("required"),
            json!("none"),
        ),
        (
            "compatible",
            json!("required"),
            json!("required"),
            json!("none"),
        ),
        (
            "responses",
            json!({"type": "function", "name": "tag-service"}),
            json!("required"),
            json!("none"),
        ),
        (
            "anthropic",
            json!({"type": "tool", "name": "tag-service"}),
            json!({"type": "any"}),
            json!({"type": "none"}),
        ),
    ];
    for (api, wire_named, wire_required, wire_none) in cases {
        for (choice, expected) in [
            (named.clone(), wire_named.clone()),
            (ToolChoice::Required, wire_required.clone()),
            (ToolChoice::None, wire_none.clone()),
        ] {
            // A named or required choice makes the model call; `none` answers at once.
            let replies: Vec<Reply> = match (api, &choice) {
                (_, ToolChoice::None) => vec![answer(api, "No tools.")],
                ("chat" | "compatible", _) => chat_turns().into(),
                ("responses", _) => vec![
                    Reply::sse(support::provider::fixture("openai_responses_calls.sse")),
                    answer(api, "Tagged."),
                ],
                _ => vec![
                    Reply::sse(support::provider::fixture("anthropic_tool_use.sse")),
                    answer(api, "Tagged."),
                ],
            };
            let server = Server::start(replies).await;
            let agent = test_agent(model_for(api, &server).await, [tag_service()]);
            let seen = choices(
                &agent,
                &server,
                RunOptions::new().tool_choice(choice.clone()),
            )
            .await;
            assert_eq!(seen[0].0, expected, "{api} {choice:?}");
            if choice == named {
                // The whole first request, as each provider gets it (V1, L3).
                let body = server.requests()[0].json();
                support::provider::assert_golden(&format!("golden_l3_{api}.json"), &body);
            }
            for (later, _) in &seen[1..] {
                assert_eq!(
                    *later,
                    Value::Null,
                    "{api} {choice:?}: later requests are free"
                );
            }
            if api == "compatible" && choice == named {
                assert_eq!(
                    seen[0].1,
                    ["tag-service"],
                    "only the named tool is advertised"
                );
            }
        }
    }
}

fn answer(api: &str, text: &str) -> Reply {
    match api {
        "chat" | "compatible" => Reply::sse(chat_answer(text)),
        "responses" => Reply::sse(responses_answer(text)),
        _ => Reply::sse(anthropic_answer(text)),
    }
}

/// A typed answer of the O2 test.
#[derive(tool_runtime::Schema, Debug)]
pub struct Tagged {
    /// The service tagged.
    pub service_id: String,
    /// How many labels it has now.
    pub labels: u32,
}

#[tokio::test]
async fn o2_each_driver_asks_for_a_typed_answer_in_its_own_form() {
    let good = r#"{"service_id":"svc-42","labels":2}"#;
    for api in ["chat", "responses", "compatible", "anthropic"] {
        let server = Server::start([answer(api, good)]).await;
        let agent = test_agent(model_for(api, &server).await, [tag_service()]);
        let typed = agent
            .execute(
                &Context::new(),
                RunRequest::new("Tag svc-42.").typed::<Tagged>(),
            )
            .await;
        let body = server.requests()[0].json();
        // The whole first request, as each provider gets it (V1, O2).
        support::provider::assert_golden(&format!("golden_o2_{api}.json"), &body);
        match api {
            "chat" => {
                let format = &body["response_format"];
                assert_eq!(format["type"], "json_schema", "{api}");
                assert_eq!(format["json_schema"]["name"], "final_answer");
                assert_eq!(format["json_schema"]["strict"], true);
                assert_eq!(
                    format["json_schema"]["schema"]["additionalProperties"], false,
                    "strict mode's form"
                );
                assert_eq!(typed.expect("a typed answer").value.labels, 2);
            }
            "responses" => {
                let format = &body["text"]["format"];
                assert_eq!(format["type"], "json_schema", "{api}");
                assert_eq!(format["name"], "final_answer");
                assert_eq!(format["strict"], true);
                assert_eq!(typed.expect("a typed answer").value.service_id, "svc-42");
            }
            // No native form: a final-answer tool, and a call is required.
            _ => {
                assert!(body.get("response_format").is_none(), "{api}");
                let names: Vec<String> = body["tools"]
                    .as_array()
                    .expect("tools")
                    .iter()
                    .filter_map(|t| {
                        t.pointer("/function/name")
                            .or_else(|| t.get("name"))
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    })
                    .collect();
                assert!(
                    names.contains(&"final_answer".to_owned()),
                    "{api}: {names:?}"
                );
                let required = if api == "anthropic" {
                    json!({"type": "any"})
                } else {
                    json!("required")
                };
                assert_eq!(body["tool_choice"], required, "{api}");
            }
        }
    }
}
