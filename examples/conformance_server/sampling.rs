//! The conformance server's fixtures that ask the client's model and read its roots (M8):
//! during the call before 2026-07-28 (`test_sampling`), in the call's answer on 2026-07-28
//! (the `test_input_required_result_*` fixtures, each request named by its key), and refused
//! with `-32021` where the client declared no sampling (`test_missing_capability`).

use serde_json::json;
use tool_runtime::mcp::ProtocolError;
use tool_runtime::roots::{Root, RootsError};
use tool_runtime::sampling::{SampleError, SamplingRequest};
use tool_runtime::{Context, Schema, Tool, ToolError, elicit::Elicited};

use super::NoArguments;

/// What `test_sampling` asks the model.
#[derive(Schema, Debug)]
struct Prompt {
    /// The prompt to send to the model.
    prompt: String,
}

/// Who answers a question by name.
#[derive(Schema, Debug)]
struct Name {
    /// The name.
    name: String,
}

fn failed(error: impl std::fmt::Display) -> ToolError {
    ToolError::new(format!("the request failed: {error}"))
}

fn listed(roots: &[Root]) -> String {
    let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
    format!("Roots: {}", uris.join(", "))
}

/// `test-sampling`: asks the client's model the prompt it is given, in at most 100 tokens.
pub(super) fn sampling() -> Tool {
    Tool::builder("test-sampling", "Asks the client's model a prompt.")
        .handler(|ctx: Context, args: Prompt| async move {
            let answer = ctx.sample(SamplingRequest::new(args.prompt, 100)).await;
            answer
                .map(|answer| format!("LLM response: {}", answer.text))
                .map_err(failed)
        })
        .build()
}

/// `test-input-required-result-sampling`: asks the capital of France (`capital_question`).
pub(super) fn input_required_sampling() -> Tool {
    Tool::builder(
        "test-input-required-result-sampling",
        "Asks the client's model the capital of France.",
    )
    .handler(|ctx: Context, _args: NoArguments| async move {
        let request = SamplingRequest::new("What is the capital of France?", 100);
        let answer = ctx.sample_named("capital_question", request).await;
        answer
            .map(|answer| format!("The model said: {}", answer.text))
            .map_err(failed)
    })
    .build()
}

/// `test-input-required-result-list-roots`: reads the client's roots (`client_roots`).
pub(super) fn input_required_roots() -> Tool {
    Tool::builder(
        "test-input-required-result-list-roots",
        "Lists the client's roots.",
    )
    .handler(|ctx: Context, _args: NoArguments| async move {
        let roots = ctx.roots_named("client_roots").await.map_err(failed)?;
        Ok::<_, ToolError>(listed(&roots))
    })
    .build()
}

/// `test-input-required-result-capabilities`: asks the client's model when it can sample,
/// else its user.
pub(super) fn input_required_capabilities() -> Tool {
    Tool::builder(
        "test-input-required-result-capabilities",
        "Asks by sampling, or by elicitation when the client cannot sample.",
    )
    .handler(|ctx: Context, _args: NoArguments| async move {
        let request = SamplingRequest::new("Say hello.", 50);
        match ctx.sample_named("sampled", request).await {
            Ok(answer) => Ok(format!("The model said: {}", answer.text)),
            Err(SampleError::Unsupported) => {
                match ctx
                    .elicit_named::<Name>("elicited", "What is your name?")
                    .await
                {
                    Ok(Elicited::Accepted(user)) => Ok(format!("Hello, {}!", user.name)),
                    Ok(_) => Ok("Hello!".to_owned()),
                    Err(error) => Err(failed(error)),
                }
            }
            Err(error) => Err(failed(error)),
        }
    })
    .build()
}

/// `test-input-required-result-multiple-inputs`: asks a name, a greeting and the roots at
/// once, in one round (`user_name`, `greeting`, `client_roots`).
pub(super) fn input_required_multiple() -> Tool {
    Tool::builder(
        "test-input-required-result-multiple-inputs",
        "Asks a name, a greeting and the roots at once.",
    )
    .handler(|ctx: Context, _args: NoArguments| async move {
        let greeting = SamplingRequest::new("Generate a greeting", 50);
        let (name, greeting, roots) = tokio::join!(
            ctx.elicit_named::<Name>("user_name", "What is your name?"),
            ctx.sample_named("greeting", greeting),
            ctx.roots_named("client_roots"),
        );
        let name = match name.map_err(failed)? {
            Elicited::Accepted(user) => user.name,
            _ => "whoever you are".to_owned(),
        };
        let greeting = greeting.map_err(failed)?.text;
        let roots = roots.map_err(|e: RootsError| failed(e))?;
        Ok::<_, ToolError>(format!("{greeting} {name}. {}", listed(&roots)))
    })
    .build()
}

/// `test-missing-capability`: asks the client's model, and ends its call with `-32021`
/// (naming `sampling`) when the client cannot sample.
pub(super) fn missing_capability() -> Tool {
    Tool::builder(
        "test-missing-capability",
        "Asks the client's model; refused when the client cannot sample.",
    )
    .handler(|ctx: Context, _args: NoArguments| async move {
        match ctx.sample(SamplingRequest::new("Say hello.", 20)).await {
            Ok(answer) => Ok(answer.text),
            Err(SampleError::Unsupported) => Err(ProtocolError::new(
                -32021,
                "the client did not declare the sampling capability this tool needs",
            )
            .with_data(json!({"requiredCapabilities": {"sampling": {}}}))),
            Err(error) => Err(ProtocolError::internal_error(error.to_string())),
        }
    })
    .build()
}
