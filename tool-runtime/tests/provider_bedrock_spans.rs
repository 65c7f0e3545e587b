//! The Bedrock driver's spans (V3, K2), in a binary of their own: the span layer is
//! installed per thread, and a callsite first seen by a test without it would be cached as
//! uninteresting.

#![cfg(feature = "bedrock")]

mod support {
    pub mod bedrock;
    pub mod provider;
    pub mod spans;
    pub mod trace;
}

use support::bedrock::{ACCESS_KEY_ID, MODEL, REGION, SECRET_ACCESS_KEY, error, text_answer};
use support::provider::Server;
use tool_runtime::providers::RetryPolicy;
use tool_runtime::providers::bedrock::Bedrock;
use tool_runtime::{Agent, Context};

// V3, K2: a request's span names the provider as the conventions do (`aws.bedrock`), the
// model, the finish reason and where the request went; no span or event shows the secret
// key or a signature (retries log at debug level, and are recorded here).
#[tokio::test]
async fn v3_spans_name_aws_bedrock_and_never_show_a_key_or_signature() {
    let spans = support::spans::Spans::default();
    let _guard = spans.install();
    let server = Server::start([
        error(429, "ThrottlingException", "slow down"),
        text_answer("ok"),
    ])
    .await;
    let model = Bedrock::builder()
        .region(REGION)
        .credentials(ACCESS_KEY_ID, SECRET_ACCESS_KEY, None)
        .base_url(server.url())
        .model(MODEL)
        .retry(RetryPolicy::new().max_retries(1).backoff(
            std::time::Duration::from_millis(1),
            std::time::Duration::from_millis(2),
        ))
        .build()
        .expect("builds");
    Agent::builder(model)
        .build()
        .expect("builds")
        .run(&Context::new(), "hi")
        .await
        .expect("answers");
    let chat = spans.one("chat");
    assert_eq!(chat.field("gen_ai.provider.name"), "aws.bedrock");
    assert_eq!(chat.field("gen_ai.request.model"), MODEL);
    assert_eq!(chat.field("server.address"), "127.0.0.1");
    assert!(
        chat.field("gen_ai.response.finish_reasons")
            .contains("stop")
    );
    let signature = server.requests()[0]
        .header("authorization")
        .and_then(|a| a.rsplit("Signature=").next())
        .map(str::to_owned)
        .unwrap_or_default();
    assert_eq!(signature.len(), 64);
    assert!(!spans.mention(SECRET_ACCESS_KEY));
    assert!(!spans.mention(&signature));
    assert!(!spans.mention("Signature="));
}
