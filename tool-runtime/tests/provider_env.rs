//! Configuration from the environment and in code (V2: drivers that work the first time):
//! which provider the variables pick, the defaults, and the configuration errors.

#![cfg(all(feature = "openai", feature = "anthropic"))]

mod support {
    pub mod provider;
}

use std::collections::HashMap;

use support::provider::{Reply, Server, chat_answer};
use tool_runtime::providers::anthropic::{self, Anthropic};
use tool_runtime::providers::openai::{self, OpenAiChat, OpenAiResponses};
use tool_runtime::providers::{ConfigError, EnvModel, from_lookup};
use tool_runtime::{Agent, Context};

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| map.get(name).cloned()
}

// V2: OPENAI_API_KEY picks OpenAI with its default model; OPENAI_MODEL and OPENAI_BASE_URL
// change them.
#[test]
fn v2_openai_api_key_picks_openai() {
    let model = from_lookup(vars(&[("OPENAI_API_KEY", "sk-1")]))
        .expect("valid")
        .expect("a provider");
    assert_eq!(model.provider(), "openai");
    assert_eq!(model.model_name(), openai::DEFAULT_MODEL);
    let Some(EnvModel::OpenAi(chat)) = from_lookup(vars(&[
        ("OPENAI_API_KEY", "sk-1"),
        ("OPENAI_BASE_URL", "https://gateway.example.invalid/v1/"),
        ("OPENAI_MODEL", "gpt-other"),
    ]))
    .expect("valid") else {
        panic!("expected OpenAI");
    };
    assert_eq!(chat.model_name(), "gpt-other");
    assert_eq!(
        chat.endpoint(),
        "https://gateway.example.invalid/v1/chat/completions"
    );
}

// V2: OPENAI_BASE_URL without a key is an OpenAI-compatible server, which needs a model.
#[test]
fn v2_a_base_url_without_a_key_is_a_compatible_server() {
    let model = from_lookup(vars(&[
        ("OPENAI_BASE_URL", "http://localhost:11434/v1"),
        ("OPENAI_MODEL", "llama3.2"),
        ("ANTHROPIC_API_KEY", "sk-ant-1"),
    ]))
    .expect("valid")
    .expect("a provider");
    assert_eq!(model.provider(), "openai-compatible");
    assert!(matches!(
        from_lookup(vars(&[("OPENAI_BASE_URL", "http://localhost:11434/v1")])),
        Err(ConfigError::MissingModel {
            var: "OPENAI_MODEL"
        })
    ));
}

// V2: ANTHROPIC_API_KEY picks Anthropic when no OpenAI variable is set; nothing set is
// None; empty variables count as unset.
#[test]
fn v2_anthropic_and_nothing() {
    let model = from_lookup(vars(&[
        ("ANTHROPIC_API_KEY", "sk-ant-1"),
        ("OPENAI_API_KEY", " "),
    ]))
    .expect("valid")
    .expect("a provider");
    assert_eq!(model.provider(), "anthropic");
    assert_eq!(model.model_name(), anthropic::DEFAULT_MODEL);
    let Some(EnvModel::Anthropic(claude)) = from_lookup(vars(&[
        ("ANTHROPIC_API_KEY", "sk-ant-1"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:4000"),
        ("ANTHROPIC_MODEL", "claude-other"),
    ]))
    .expect("valid") else {
        panic!("expected Anthropic");
    };
    assert_eq!(claude.endpoint(), "http://127.0.0.1:4000/v1/messages");
    assert_eq!(claude.model_name(), "claude-other");
    assert!(from_lookup(vars(&[])).expect("valid").is_none());
    assert!(
        from_lookup(vars(&[("OPENAI_API_KEY", "")]))
            .expect("valid")
            .is_none()
    );
}

// V2: configuration errors name what is wrong and never show the key.
#[test]
fn v2_configuration_errors_are_matchable_and_never_show_the_key() {
    assert!(matches!(
        OpenAiChat::builder().build(),
        Err(ConfigError::MissingApiKey {
            var: "OPENAI_API_KEY"
        })
    ));
    assert!(matches!(
        Anthropic::builder().build(),
        Err(ConfigError::MissingApiKey {
            var: "ANTHROPIC_API_KEY"
        })
    ));
    assert!(matches!(
        OpenAiResponses::builder()
            .api_key("k")
            .base_url("localhost:8080")
            .build(),
        Err(ConfigError::InvalidBaseUrl { .. })
    ));
    let err = OpenAiChat::builder()
        .api_key("sk-secret\nwith-newline")
        .build()
        .expect_err("a key with a newline cannot be a header");
    assert!(matches!(err, ConfigError::InvalidApiKey));
    assert!(!format!("{err} {err:?}").contains("sk-secret"));
    let err = Anthropic::builder()
        .api_key("k")
        .header("x-proxy-token", "secret\r\nvalue")
        .build()
        .expect_err("an invalid header");
    assert!(matches!(&err, ConfigError::InvalidHeader { name } if name == "x-proxy-token"));
    assert!(!format!("{err} {err:?}").contains("secret"));
    let claude = Anthropic::builder()
        .api_key("sk-ant-SECRET")
        .build()
        .expect("valid");
    assert!(!format!("{claude:?}").contains("SECRET"));
}

// V2: the model the environment picked runs an agent (here a compatible server on
// 127.0.0.1), and extra headers and body fields reach the server.
#[tokio::test]
async fn v2_the_environments_model_runs_an_agent() {
    let server = Server::start([Reply::sse(chat_answer("Hello from the local server."))]).await;
    let base = format!("{}/v1", server.url());
    let model = from_lookup(vars(&[
        ("OPENAI_BASE_URL", &base),
        ("OPENAI_MODEL", "qwen3"),
    ]))
    .expect("valid")
    .expect("a provider");
    let out = Agent::builder(model)
        .build()
        .expect("builds")
        .run(&Context::new(), "hi")
        .await
        .expect("answers");
    assert_eq!(out.text, "Hello from the local server.");

    let server = Server::start([Reply::sse(chat_answer("ok"))]).await;
    let model = OpenAiChat::compatible(format!("{}/v1", server.url()))
        .model("qwen3")
        .api_key("local-key")
        .header("x-tenant", "blue")
        .body_field("temperature", serde_json::json!(0.2))
        .build()
        .expect("valid");
    Agent::builder(model)
        .build()
        .expect("builds")
        .run(&Context::new(), "hi")
        .await
        .expect("answers");
    let request = &server.requests()[0];
    assert_eq!(request.header("x-tenant"), Some("blue"));
    assert_eq!(request.header("authorization"), Some("Bearer local-key"));
    assert_eq!(request.json()["temperature"], 0.2);
    assert_eq!(request.json()["model"], "qwen3");
}
