//! The resources and prompts of the suite's server scenarios (M7): `resources-*`,
//! `prompts-*`, `completion-complete` and `caching`.
//!
//! - `test://static-text` (text) and `test://static-binary` (a PNG, base64);
//! - `test://template/{id}/data`, whose text names the `id` read from the URI;
//! - `test://watched-resource`, which clients subscribe to;
//! - `test_simple_prompt`, `test_prompt_with_arguments` (`arg1`, `arg2`, each substituted in
//!   its message), `test_prompt_with_embedded_resource` (embeds `resourceUri`) and
//!   `test_prompt_with_image` (a 1×1 PNG); `arg1` completes from a fixed list;
//! - `test_input_required_result_prompt`, whose handler asks its user what context to use
//!   (`ctx.elicit_named`, under the key `user_context`): on 2026-07-28 in the answer of
//!   `prompts/get` (`input_required`), as a tool's handler asks;
//! - `test-trigger-prompt-change`, the tool the `server-stateless` scenario calls to change
//!   the prompt list while a `subscriptions/listen` stream is open: it tells the clients, as
//!   an application whose prompts changed would ([`McpServer::prompts_changed`]).

use std::sync::OnceLock;

use tool_runtime::elicit::Elicited;
use tool_runtime::mcp::{Contents, McpPrompt, McpResource, McpServer, McpServerBuilder, Message};
use tool_runtime::outcome::{Image, Resource};
use tool_runtime::{BoxError, Context, Schema, Tool, ToolError};

use super::NoArguments;

/// The server [`trigger_prompt_change`] tells the clients of, once it is built.
static SERVED: OnceLock<McpServer> = OnceLock::new();

/// Remembers `server` as the one whose prompt list [`trigger_prompt_change`] changes (the
/// first server served in this process).
pub(crate) fn served(server: &McpServer) {
    let _ = SERVED.set(server.clone());
}

/// `test-trigger-prompt-change`: tells the clients listening for prompt-list changes that
/// the list changed, and says how many were told.
pub(crate) fn trigger_prompt_change() -> Tool {
    Tool::builder(
        "test-trigger-prompt-change",
        "Tells the listening clients that the prompt list changed.",
    )
    .handler(|_ctx: Context, _args: NoArguments| async move {
        let Some(server) = SERVED.get() else {
            return Err(ToolError::new("the server is not served yet"));
        };
        let told = server.prompts_changed().await;
        Ok(format!(
            "told {told} client(s) that the prompt list changed"
        ))
    })
    .build()
}

/// A 1×1 red PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xDE, 0x00, 0x00, 0x00, 0x0C, 0x49, 0x44, 0x41, 0x54, 0x08, 0xD7, 0x63, 0xF8, 0xCF, 0xC0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xDD, 0x8D, 0xB0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E,
    0x44, 0xAE, 0x42, 0x60, 0x82,
];

/// The identifier in a templated URI.
#[derive(Schema)]
struct TemplateId {
    /// The identifier.
    #[schema(min_len = 1, max_len = 64)]
    id: String,
}

/// The arguments of `test_prompt_with_arguments`.
#[derive(Schema)]
struct TwoArguments {
    /// First test argument.
    arg1: String,
    /// Second test argument.
    arg2: String,
}

/// What `test_input_required_result_prompt` asks its user.
#[derive(Schema, Debug)]
struct PromptContext {
    /// The context the prompt should use.
    context: String,
}

/// The argument of `test_prompt_with_embedded_resource`.
#[derive(Schema)]
struct EmbeddedUri {
    /// URI of the resource to embed.
    #[schema(rename = "resourceUri", min_len = 1, max_len = 2048)]
    resource_uri: String,
}

fn resources() -> Vec<McpResource> {
    vec![
        McpResource::builder("test://static-text", "static-text")
            .description("A static text resource.")
            .mime_type("text/plain")
            .read(|_ctx: Context| async {
                Ok::<_, ToolError>("This is the content of the static text resource.")
            })
            .build(),
        McpResource::builder("test://static-binary", "static-binary")
            .description("A static binary resource (a 1×1 PNG).")
            .mime_type("image/png")
            .read(|_ctx: Context| async { Ok::<_, ToolError>(Contents::blob(PNG)) })
            .build(),
        McpResource::builder("test://template/{id}/data", "template-data")
            .description("Data of the item `id`.")
            .mime_type("application/json")
            .read_typed(|_ctx: Context, p: TemplateId| async move {
                let data = serde_json::json!({ "id": p.id, "templateTest": true });
                Ok::<_, ToolError>(data.to_string())
            })
            .build(),
        McpResource::builder("test://watched-resource", "watched-resource")
            .description("A resource clients subscribe to.")
            .mime_type("text/plain")
            .read(|_ctx: Context| async { Ok::<_, ToolError>("Watched resource content.") })
            .build(),
    ]
}

fn prompts() -> Vec<McpPrompt> {
    vec![
        McpPrompt::builder("test_simple_prompt", "A simple prompt without arguments.")
            .get(|_ctx: Context| async {
                Ok::<_, ToolError>(vec![Message::user("This is a simple prompt for testing.")])
            })
            .build(),
        McpPrompt::builder("test_prompt_with_arguments", "A prompt with two arguments.")
            .get_typed(|_ctx: Context, a: TwoArguments| async move {
                let text = format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    a.arg1, a.arg2
                );
                Ok::<_, ToolError>(vec![Message::user(text)])
            })
            .complete("arg1", |_ctx: Context, typed: String| async move {
                let values = ["test", "testing", "tested"];
                Ok::<_, ToolError>(
                    (values.into_iter())
                        .filter(|v| v.starts_with(&typed))
                        .map(str::to_owned)
                        .collect(),
                )
            })
            .build(),
        McpPrompt::builder(
            "test_prompt_with_embedded_resource",
            "A prompt that embeds a resource.",
        )
        .get_typed(|_ctx: Context, e: EmbeddedUri| async move {
            let resource = Resource::text(
                e.resource_uri,
                "text/plain",
                "Embedded resource content for testing.",
            );
            Ok::<_, ToolError>(vec![
                Message::user_resource(resource),
                Message::user("Please process the embedded resource above."),
            ])
        })
        .build(),
        McpPrompt::builder(
            "test_input_required_result_prompt",
            "A prompt that asks its user what context to use.",
        )
        .get(|ctx: Context| async move {
            let asked = ctx.elicit_named::<PromptContext>(
                "user_context",
                "What context should the prompt use?",
            );
            let context = match asked.await {
                Ok(Elicited::Accepted(answer)) => answer.context,
                Ok(_) => "no context".to_owned(),
                Err(error) => return Err(ToolError::new(format!("the question failed: {error}"))),
            };
            Ok(vec![Message::user(format!("Use this context: {context}"))])
        })
        .build(),
        McpPrompt::builder("test_prompt_with_image", "A prompt with an image.")
            .get(|_ctx: Context| async {
                Ok::<_, ToolError>(vec![
                    Message::user_image(Image::png(PNG)),
                    Message::user("Please analyze the image above."),
                ])
            })
            .build(),
    ]
}

/// `builder` with the suite's resources and prompts.
pub(crate) fn serve_catalog(builder: McpServerBuilder) -> Result<McpServerBuilder, BoxError> {
    let builder = resources()
        .into_iter()
        .fold(builder, McpServerBuilder::resource);
    Ok(prompts()
        .into_iter()
        .fold(builder, McpServerBuilder::prompt))
}
