//! V5: every request body the Bedrock driver sends, in every shape a run makes (tools and
//! their schemas, tool choice of each kind, the system prompt, calls, results that failed or
//! carry images, typed answers, Converse and ConverseStream), is checked against botocore's
//! own `bedrock-runtime` service model with botocore's own ParamValidator (pinned, in a
//! virtual environment the test provisions under `target/peers/`): an unknown or mistyped
//! field fails the test.

#![cfg(feature = "bedrock")]

mod support {
    pub mod bedrock;
    pub mod bedrock_peers;
    pub mod provider;
}

use serde_json::{Value, json};
use support::bedrock::{
    ACCESS_KEY_ID, MODEL, REGION, SECRET_ACCESS_KEY, converse_answer, converse_tools, text_answer,
    tool_answer,
};
use support::bedrock_peers::validate;
use support::provider::Server;
use support::provider::scenario::{tag_service, test_agent, transcript};
use tool_runtime::providers::RetryPolicy;
use tool_runtime::providers::bedrock::{Bedrock, BedrockBuilder, ToolChoice};
use tool_runtime::{Context, Message, RunOptions, RunRequest};

fn builder(server: &Server) -> BedrockBuilder {
    Bedrock::builder()
        .region(REGION)
        .credentials(ACCESS_KEY_ID, SECRET_ACCESS_KEY, None)
        .base_url(server.url())
        .model(MODEL)
        .retry(RetryPolicy::none())
}

/// The bodies `server` received, with the operation each path names.
fn bodies(server: &Server) -> Vec<(&'static str, Value)> {
    server
        .requests()
        .iter()
        .map(|r| {
            let operation = if r.path.ends_with("/converse-stream") {
                "ConverseStream"
            } else {
                "Converse"
            };
            (operation, r.json())
        })
        .collect()
}

/// A typed answer.
#[derive(tool_runtime::Schema, Debug)]
pub struct Tagged {
    /// The service tagged.
    pub service_id: String,
    /// How many labels it has now.
    pub labels: u32,
}

/// Runs the runs whose requests are checked, and returns their bodies.
async fn every_shape() -> Vec<(&'static str, Value)> {
    let mut all = Vec::new();
    // The transcript: calls, a failed result, a result with an image, audio and resources;
    // the driver's own tool choice and max tokens.
    let server = Server::start([text_answer("Done.")]).await;
    let model = builder(&server)
        .tool_choice(ToolChoice::Tool("tag-service".into()))
        .max_tokens(1000)
        .build()
        .expect("builds");
    let agent = test_agent(model, [tag_service()]);
    agent
        .run(&Context::new(), transcript())
        .await
        .expect("answers");
    all.extend(bodies(&server));
    // A run with parallel calls, one failing, then the answer; the run's tool choice.
    let calls = [
        (
            "tooluse_A",
            "lookup-window",
            r#"{"service_id":"svc-42","days":3}"#,
        ),
        ("tooluse_B", "lookup-window", r#"{"service_id":"svc-7"}"#),
    ];
    let server = Server::start([tool_answer("Let me look.", &calls), text_answer("ok")]).await;
    let agent = test_agent(builder(&server).build().expect("builds"), []);
    let options = RunOptions::new().tool_choice(tool_runtime::ToolChoice::Required);
    let request = RunRequest::new("When?").options(options);
    agent
        .execute(&Context::new(), request)
        .await
        .expect("answers");
    all.extend(bodies(&server));
    // A typed answer (the final-answer tool, required).
    let answer = [(
        "tooluse_F",
        "final_answer",
        r#"{"service_id":"svc-42","labels":2}"#,
    )];
    let server = Server::start([tool_answer("", &answer)]).await;
    let agent = test_agent(builder(&server).build().expect("builds"), [tag_service()]);
    let request = RunRequest::new("Tag svc-42.").typed::<Tagged>();
    agent
        .execute(&Context::new(), request)
        .await
        .expect("a typed answer");
    all.extend(bodies(&server));
    // Converse, not streamed, with a system message and a call whose arguments are not an
    // object.
    let server = Server::start([
        converse_tools(&[("tooluse_C", "lookup-window", json!("not an object"))]),
        converse_answer("ok", "end_turn"),
    ])
    .await;
    let agent = test_agent(
        builder(&server).streaming(false).build().expect("builds"),
        [],
    );
    let input = vec![Message::system("Use metric units."), Message::user("svc?")];
    agent.run(&Context::new(), input).await.expect("answers");
    all.extend(bodies(&server));
    all
}

// V5: every body in every shape passes botocore's ParamValidator.
#[tokio::test]
async fn v5_every_request_fits_botocores_service_model() {
    let bodies = every_shape().await;
    assert!(bodies.len() >= 6, "{}", bodies.len());
    assert!(bodies.iter().any(|(op, _)| *op == "Converse"));
    let verdicts = validate(MODEL, &bodies).expect("the botocore helper runs");
    assert_eq!(verdicts.len(), bodies.len());
    for ((operation, body), verdict) in bodies.iter().zip(verdicts) {
        if let Err(report) = verdict {
            panic!("{operation} body does not fit botocore's model:\n{report}\n{body:#}");
        }
    }
}

// V5: the check can fail: a field in the wrong place (`temperature` at the top, where it
// belongs in `inferenceConfig`), a mistyped one, and a missing one (a message's `role`) are
// each reported.
#[tokio::test]
async fn v5_an_unknown_or_mistyped_field_fails_the_check() {
    let server = Server::start([text_answer("ok")]).await;
    let model = builder(&server)
        .body_field("temperature", json!(0.2))
        .build()
        .expect("builds");
    test_agent(model, [])
        .run(&Context::new(), "hi")
        .await
        .expect("answers");
    let (operation, good) = bodies(&server).remove(0);
    let mut mistyped = good.clone();
    mistyped["inferenceConfig"]["maxTokens"] = json!("4096");
    let mut missing = good.clone();
    if let Some(map) = missing.as_object_mut() {
        map.remove("temperature");
    }
    if let Some(message) = missing["messages"][0].as_object_mut() {
        message.remove("role");
    }
    let verdicts = validate(
        MODEL,
        &[
            (operation, good),
            (operation, mistyped),
            (operation, missing),
        ],
    )
    .expect("the botocore helper runs");
    let reports: Vec<String> = verdicts
        .into_iter()
        .map(|v| v.err().unwrap_or_default())
        .collect();
    assert!(
        reports[0].contains("Unknown parameter") && reports[0].contains("temperature"),
        "{}",
        reports[0]
    );
    assert!(
        reports[1].contains("inferenceConfig.maxTokens"),
        "{}",
        reports[1]
    );
    assert!(
        reports[2].contains("Missing required parameter"),
        "{}",
        reports[2]
    );
}
