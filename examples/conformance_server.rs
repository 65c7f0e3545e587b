//! The server side of the official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! rule M1): the tools its server scenarios call, served over streamable HTTP with
//! [`McpServer`], built only with the public API of `tool_runtime`.
//!
//! ```text
//! cargo run --example conformance_server --features mcp                   # 127.0.0.1:0
//! cargo run --example conformance_server --features mcp -- 127.0.0.1:3000
//! ```
//!
//! It prints `conformance_server: serving at http://127.0.0.1:PORT/mcp` on standard error
//! when it is ready, and serves until it is killed. `examples/tests/mcp_conformance.rs` runs
//! the suite against [`serve`], all that `main` does.
//!
//! # Names
//!
//! The suite calls tools by snake_case names (`test_simple_text`); a declared tool name
//! cannot contain `_` (N1), so each tool is declared with the hyphenated name and
//! [`mcp_names`] maps the declared names to the names the suite calls, which [`builder`]
//! publishes them under (`McpServerBuilder::naming`, M2).
//!
//! # What each tool does
//!
//! As the suite's scenarios ask (the `tools-call-*` scenarios, `json-schema-2020-12`):
//!
//! - `test-simple-text`: the text `This is a simple text response for testing.`;
//! - `test-image-content`: a 1×1 red PNG as image content (O3), beside a line of text;
//! - `test-error-handling`: a tool error (`isError: true`) with the text
//!   `This tool intentionally returns an error for testing`;
//! - `test-tool-with-progress`: progress 0, 50 and 100 of 100, about 50 ms apart, when the
//!   client asked for progress (K3);
//! - `json-schema-2020-12-tool`: an input schema with `$schema`, `$defs` and
//!   `additionalProperties: false` (JSON Schema 2020-12), listed as declared;
//! - `test-audio-content`: a WAV clip as audio content (M4);
//! - `test-embedded-resource`: an embedded text resource (M4);
//! - `test-multiple-content-types`: text, an image and an embedded resource (M4);
//! - `test-elicitation`: asks its user (`ctx.elicit`, M3) for a username and an email, with
//!   the message it is given;
//! - `test-elicitation-sep1034-defaults`: asks for a string, an integer, a number, an enum and
//!   a boolean, each with a default (SEP-1034);
//! - `test-elicitation-sep1330-enums`: asks for SEP-1330's titled, untitled and legacy
//!   enums and multi-select arrays, with a schema written by hand (`impl Schema`);
//! - `test-reconnection`: answers at once, on the event stream of its `tools/call` (which the
//!   server opens with a priming event and a `retry` field). The `server-sse-polling` scenario
//!   would also like the tool to close that stream before its answer, for the client to
//!   resume it with `Last-Event-ID`; a tool cannot do that, and the suite notes it (`INFO`);
//! - `test-tool-with-logging`: logs three messages at `info`, about 50 ms apart (M8);
//! - `test-input-required-result-elicitation`: asks the user's name under the key
//!   `user_name` (M10), on 2026-07-28 in its answer (`input_required`);
//! - `test-input-required-result-request-state` and `…-tampered-state` ask a confirmation
//!   (`confirm`), `test-input-required-result-multi-round` a name and then a colour
//!   (`step1`, `step2`), each in its own round;
//! - `test-custom-header`: its `region` travels in the `Mcp-Param-Region` header on
//!   2026-07-28 (`x-mcp-header`), which the server checks against the body (M10);
//! - the Tasks extension's fixtures (M5, M9): `greet` (never a task), `slow-compute` (works
//!   `seconds` seconds; a task when the client has the extension), `failing-job` (only as a
//!   task; fails at its work), `protocol-error-job` (ends with a protocol error),
//!   `confirm-delete` and `multi-input` (tasks that wait for input: one question, two at
//!   once, answered by `tasks/update`);
//! - M8's fixtures (`conformance_server/sampling.rs`): `test-sampling` asks the client's model
//!   during the call, `test-input-required-result-sampling`, `…-list-roots`,
//!   `…-capabilities` and `…-multiple-inputs` ask it (and read the roots) in the answer on
//!   2026-07-28, `test-missing-capability` is refused `-32021` for a client that cannot sample.
//!
//! Beside the tools, the resources and prompts of the `resources-*`, `prompts-*` and
//! `completion-complete` scenarios (M7), in `conformance_server/catalog.rs`, with
//! `test-trigger-prompt-change`, which tells the clients listening on `subscriptions/listen`
//! that the prompt list changed (`server-stateless`).

use std::time::Duration;

use fixtures::{
    confirm_delete, custom_header, failing_job, greet, input_required_confirm,
    input_required_elicitation, input_required_multi_round, multi_input, protocol_error_job,
    slow_compute, tool_with_task,
};

use serde::Serialize;
use serde_json::{Value, json};
use tool_runtime::mcp::{
    HttpOptions, HttpServer, JsonSchemaValidator, McpNaming, McpServer, McpServerBuilder,
    TaskSupport,
};
use tool_runtime::{
    BoxError, Context, LogLevel, Schema, Tool, ToolError,
    elicit::Elicited,
    outcome::{Image, Resource, WithImages},
};

// The fixtures of 2026-07-28's scenarios and the Tasks extension's.
#[path = "conformance_server/fixtures.rs"]
mod fixtures;

// The fixtures that sample and read roots (M8).
#[path = "conformance_server/sampling.rs"]
mod sampling;
// The resources and prompts of the suite's scenarios (M7).
#[path = "conformance_server/catalog.rs"]
mod catalog;

/// The address served when none is given: loopback, a port the system chooses.
const DEFAULT_ADDRESS: &str = "127.0.0.1:0";

/// A tool that takes no arguments.
#[derive(Schema, Debug)]
struct NoArguments {}

/// Every tool's declared name, with the MCP name the conformance suite calls it by.
pub fn mcp_names() -> Vec<(&'static str, &'static str)> {
    vec![
        ("test-simple-text", "test_simple_text"),
        ("test-image-content", "test_image_content"),
        ("test-error-handling", "test_error_handling"),
        ("test-tool-with-progress", "test_tool_with_progress"),
        ("json-schema-2020-12-tool", "json_schema_2020_12_tool"),
        ("test-reconnection", "test_reconnection"),
        ("test-audio-content", "test_audio_content"),
        ("test-embedded-resource", "test_embedded_resource"),
        ("test-multiple-content-types", "test_multiple_content_types"),
        ("test-elicitation", "test_elicitation"),
        (
            "test-elicitation-sep1034-defaults",
            "test_elicitation_sep1034_defaults",
        ),
        (
            "test-elicitation-sep1330-enums",
            "test_elicitation_sep1330_enums",
        ),
        (
            "test-input-required-result-elicitation",
            "test_input_required_result_elicitation",
        ),
        (
            "test-input-required-result-request-state",
            "test_input_required_result_request_state",
        ),
        (
            "test-input-required-result-tampered-state",
            "test_input_required_result_tampered_state",
        ),
        (
            "test-input-required-result-multi-round",
            "test_input_required_result_multi_round",
        ),
        ("test-custom-header", "test_custom_header"),
        ("test-tool-with-logging", "test_tool_with_logging"),
        ("greet", "greet"),
        ("slow-compute", "slow_compute"),
        ("failing-job", "failing_job"),
        ("protocol-error-job", "protocol_error_job"),
        ("confirm-delete", "confirm_delete"),
        ("multi-input", "multi_input"),
        ("test-tool-with-task", "test_tool_with_task"),
        // M8: sampling and roots.
        ("test-sampling", "test_sampling"),
        (
            "test-input-required-result-sampling",
            "test_input_required_result_sampling",
        ),
        (
            "test-input-required-result-list-roots",
            "test_input_required_result_list_roots",
        ),
        (
            "test-input-required-result-capabilities",
            "test_input_required_result_capabilities",
        ),
        (
            "test-input-required-result-multiple-inputs",
            "test_input_required_result_multiple_inputs",
        ),
        ("test-missing-capability", "test_missing_capability"),
        // M7: subscriptions/listen.
        ("test-trigger-prompt-change", "test_trigger_prompt_change"),
    ]
}

/// A minimal WAV file: a RIFF header of 44 bytes and no samples.
const SILENT_WAV: [u8; 44] = [
    b'R', b'I', b'F', b'F', 36, 0, 0, 0, b'W', b'A', b'V', b'E', b'f', b'm', b't', b' ', 16, 0, 0,
    0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x80, 0x3e, 0, 0, 2, 0, 16, 0, b'd', b'a', b't', b'a', 0, 0,
    0, 0,
];

fn audio_content() -> Tool {
    Tool::builder(
        "test-audio-content",
        "Returns a short WAV clip as audio content.",
    )
    .handler(|_ctx: Context, _args: NoArguments| async {
        Ok::<_, ToolError>(
            WithImages::new("A short silence.").image(Image::wav(SILENT_WAV.to_vec())),
        )
    })
    .build()
}

/// The embedded resource the suite's scenarios show.
fn embedded() -> Resource {
    Resource::text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

fn embedded_resource() -> Tool {
    Tool::builder(
        "test-embedded-resource",
        "Returns an embedded text resource.",
    )
    .handler(|_ctx: Context, _args: NoArguments| async {
        Ok::<_, ToolError>(WithImages::new("An embedded resource.").resource(embedded()))
    })
    .build()
}

fn multiple_content_types() -> Tool {
    Tool::builder(
        "test-multiple-content-types",
        "Returns text, an image and an embedded resource.",
    )
    .handler(|_ctx: Context, _args: NoArguments| async {
        Ok::<_, ToolError>(
            WithImages::new("Multiple content types test:")
                .image(Image::png(RED_PIXEL_PNG.to_vec()))
                .resource(embedded()),
        )
    })
    .build()
}

/// What `test-elicitation` asks its user for.
#[derive(Schema, Debug, Serialize)]
struct UserInfo {
    /// The user's name.
    username: String,
    /// The user's email address.
    email: String,
}

/// The message `test-elicitation` asks with.
#[derive(Schema, Debug)]
struct AskWith {
    /// What to ask the user.
    message: String,
}

fn elicitation() -> Tool {
    Tool::builder(
        "test-elicitation",
        "Asks the user for a username and an email (M3).",
    )
    .handler(|ctx: Context, args: AskWith| async move {
        let text = match ctx.elicit::<UserInfo>(&args.message).await {
            Ok(Elicited::Accepted(user)) => format!(
                "User provided: {}",
                serde_json::to_string(&user).unwrap_or_default()
            ),
            Ok(Elicited::Declined) => "User declined".to_owned(),
            Ok(Elicited::Cancelled) => "User cancelled".to_owned(),
            Err(e) => return Err(ToolError::new(format!("elicitation failed: {e}"))),
        };
        Ok(text)
    })
    .build()
}

/// What `test-elicitation-sep1034-defaults` asks for: a field of each primitive type, each
/// with a default (SEP-1034).
#[derive(Schema, Debug, Serialize)]
struct WithDefaults {
    /// A name.
    #[schema(default = "John Doe")]
    name: String,
    /// An age.
    #[schema(default = 30)]
    age: i64,
    /// A score.
    #[schema(default = 95.5)]
    score: f64,
    /// A status.
    #[schema(one_of = ["active", "inactive", "pending"], default = "active")]
    status: String,
    /// Whether verified.
    #[schema(default = true)]
    verified: bool,
}

fn elicitation_defaults() -> Tool {
    Tool::builder(
        "test-elicitation-sep1034-defaults",
        "Asks for a field of each primitive type, each with a default (SEP-1034).",
    )
    .handler(|ctx: Context, _args: NoArguments| async move {
        let (action, content) = match ctx
            .elicit::<WithDefaults>("Please review the defaults.")
            .await
        {
            Ok(Elicited::Accepted(values)) => {
                ("accept", serde_json::to_string(&values).unwrap_or_default())
            }
            Ok(Elicited::Declined) => ("decline", "null".to_owned()),
            Ok(Elicited::Cancelled) => ("cancel", "null".to_owned()),
            Err(e) => return Err(ToolError::new(format!("elicitation failed: {e}"))),
        };
        Ok::<_, ToolError>(format!(
            "Elicitation completed: action={action}, content={content}"
        ))
    })
    .build()
}

/// A 1×1 red PNG.
const RED_PIXEL_PNG: [u8; 69] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92, 0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

fn simple_text() -> Tool {
    Tool::builder("test-simple-text", "Returns a simple text response.")
        .handler(|_ctx: Context, _args: NoArguments| async {
            Ok::<_, ToolError>("This is a simple text response for testing.")
        })
        .build()
}

fn image_content() -> Tool {
    Tool::builder("test-image-content", "Returns a 1x1 red PNG image.")
        .handler(|_ctx: Context, _args: NoArguments| async {
            Ok::<_, ToolError>(
                WithImages::new("A 1x1 red pixel.").image(Image::png(RED_PIXEL_PNG.to_vec())),
            )
        })
        .build()
}

fn error_handling() -> Tool {
    Tool::builder(
        "test-error-handling",
        "Always fails, with an error for the client.",
    )
    .handler(|_ctx: Context, _args: NoArguments| async {
        Err::<String, _>(ToolError::new(
            "This tool intentionally returns an error for testing",
        ))
    })
    .build()
}

fn with_progress() -> Tool {
    Tool::builder(
        "test-tool-with-progress",
        "Reports progress 0, 50 and 100 of 100, about 50 ms apart.",
    )
    .handler(|ctx: Context, _args: NoArguments| async move {
        for (i, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            ctx.progress(done, 100.0, None);
        }
        Ok::<_, ToolError>("Progress reported: 0, 50 and 100 of 100.")
    })
    .build()
}

/// The input schema of `json-schema-2020-12-tool`, as the `json-schema-2020-12` scenario
/// gives it.
fn schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": { "type": "string" },
                    "city": { "type": "string" }
                }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": {
            "properties": { "contactMethod": { "const": "phone" } },
            "required": ["contactMethod"]
        },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    })
}

fn json_schema_2020_12() -> Result<Tool, BoxError> {
    let schema = schema_2020_12();
    let validator = JsonSchemaValidator::new(&schema)?;
    Ok(Tool::builder(
        "json-schema-2020-12-tool",
        "Tool with JSON Schema 2020-12 features",
    )
    .dynamic_handler(schema, validator, |_ctx: Context, args: Value| async move {
        Ok::<_, ToolError>(format!("received {args}"))
    })
    .build())
}

fn reconnection() -> Tool {
    Tool::builder(
        "test-reconnection",
        "Answers at once; the suite's SSE polling scenario calls it.",
    )
    .handler(|_ctx: Context, _args: NoArguments| async {
        Ok::<_, ToolError>("Reconnection test completed.")
    })
    .build()
}

/// The answers of SEP-1330's five kinds of enum, as the fields are parsed.
#[derive(Schema, Debug, Serialize)]
#[schema(rename_all = "camelCase")]
struct EnumAnswers {
    /// An untitled single choice.
    #[schema(one_of = ["option1", "option2", "option3"])]
    untitled_single: String,
    /// A titled single choice.
    #[schema(one_of = ["value1", "value2", "value3"])]
    titled_single: String,
    /// A legacy titled choice.
    #[schema(one_of = ["opt1", "opt2", "opt3"])]
    legacy_enum: String,
    /// An untitled multiple choice.
    untitled_multi: Vec<String>,
    /// A titled multiple choice.
    titled_multi: Vec<String>,
}

/// What `test-elicitation-sep1330-enums` asks for: SEP-1330's titled enums (`oneOf` of
/// `const`/`title`), legacy `enumNames` and multi-select arrays, which `#[derive(Schema)]`
/// does not write. The schema is written by hand ([`Schema::schema`]); the answer is parsed by
/// the derived [`EnumAnswers`], every value checked against its choices.
#[derive(Debug, Serialize)]
#[serde(transparent)]
struct Sep1330(EnumAnswers);

impl Schema for Sep1330 {
    fn schema(_generator: &mut tool_runtime::schema::SchemaGen) -> Value {
        let titled = |values: [(&str, &str); 3]| -> Value {
            values
                .iter()
                .map(|(value, title)| json!({"const": value, "title": title}))
                .collect()
        };
        json!({
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {
                    "type": "string",
                    "oneOf": titled([("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")])
                },
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]
                },
                "untitledMulti": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
                },
                "titledMulti": {
                    "type": "array",
                    "items": {
                        "anyOf": titled([("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")])
                    }
                }
            },
            "required": []
        })
    }

    fn parse(
        value: tool_runtime::json::Json,
        cx: &mut tool_runtime::violation::ParseCx,
    ) -> Option<Self> {
        EnumAnswers::parse(value, cx).map(Sep1330)
    }

    fn to_json(&self) -> Value {
        self.0.to_json()
    }
}

fn elicitation_enums() -> Tool {
    Tool::builder(
        "test-elicitation-sep1330-enums",
        "Asks for SEP-1330's five kinds of enum.",
    )
    .handler(|ctx: Context, _args: NoArguments| async move {
        let text = match ctx.elicit::<Sep1330>("Please choose.").await {
            Ok(Elicited::Accepted(answers)) => format!(
                "Elicitation completed: action=accept, content={}",
                serde_json::to_string(&answers).unwrap_or_default()
            ),
            Ok(Elicited::Declined) => "Elicitation completed: action=decline".to_owned(),
            Ok(Elicited::Cancelled) => "Elicitation completed: action=cancel".to_owned(),
            Err(e) => return Err(ToolError::new(format!("elicitation failed: {e}"))),
        };
        Ok::<_, ToolError>(text)
    })
    .build()
}

/// `test-tool-with-logging`: logs three messages at `info`, about 50 ms apart (M8).
fn with_logging() -> Tool {
    Tool::builder("test-tool-with-logging", "Logs three messages as it works.")
        .handler(|ctx: Context, _args: NoArguments| async move {
            ctx.log(LogLevel::Info, "Tool execution started");
            tokio::time::sleep(Duration::from_millis(50)).await;
            ctx.log(LogLevel::Info, "Tool processing data");
            tokio::time::sleep(Duration::from_millis(50)).await;
            ctx.log(LogLevel::Info, "Tool execution completed");
            Ok::<_, ToolError>("Logged three messages.")
        })
        .build()
}

/// The conformance server's tools, in the order `tools/list` gives them.
///
/// # Errors
///
/// The 2020-12 schema is refused by the validator.
pub fn builder() -> Result<McpServerBuilder, BoxError> {
    let server = catalog::serve_catalog(McpServer::builder())?;
    Ok(server
        .name("tool-runtime-conformance")
        .version(env!("CARGO_PKG_VERSION"))
        .tool(simple_text())
        .tool(image_content())
        .tool(error_handling())
        .tool(with_progress())
        .tool(json_schema_2020_12()?)
        .tool(reconnection())
        .tool(audio_content())
        .tool(embedded_resource())
        .tool(multiple_content_types())
        .tool(elicitation())
        .tool(elicitation_defaults())
        .tool(elicitation_enums())
        .tool(with_logging())
        .tool(input_required_elicitation())
        .tool(input_required_confirm(
            "test-input-required-result-request-state",
        ))
        .tool(input_required_confirm(
            "test-input-required-result-tampered-state",
        ))
        .tool(input_required_multi_round())
        .tool(custom_header()?)
        .tool(greet())
        .tool(slow_compute())
        .tool(failing_job())
        .tool(protocol_error_job())
        .tool(confirm_delete())
        .tool(multi_input())
        .tool(tool_with_task())
        .tool(sampling::sampling())
        .tool(sampling::input_required_sampling())
        .tool(sampling::input_required_roots())
        .tool(sampling::input_required_capabilities())
        .tool(sampling::input_required_multiple())
        .tool(sampling::missing_capability())
        .tool(catalog::trigger_prompt_change())
        // M5, M9: the Tasks extension's fixtures run as tasks for the clients that have it.
        .task_support("slow-compute", TaskSupport::Optional)
        .task_support("failing-job", TaskSupport::Required)
        .task_support("protocol-error-job", TaskSupport::Optional)
        .task_support("confirm-delete", TaskSupport::Optional)
        .task_support("multi-input", TaskSupport::Optional)
        .task_support("test-tool-with-task", TaskSupport::Required)
        .questions_before_task("test-tool-with-task")
        // M2: the suite calls the tools by snake_case names.
        .naming(McpNaming::map(mcp_names())))
}

/// Serves the conformance server's tools over streamable HTTP on `address`, at `/mcp`, with
/// the default options (sessions; loopback `Host`s and origins only, which the suite's
/// `dns-rebinding-protection` scenario checks).
///
/// # Errors
///
/// The server cannot be built, or `address` cannot be bound.
pub async fn serve(address: &str) -> Result<HttpServer, BoxError> {
    let server = builder()?.build()?;
    catalog::served(&server);
    Ok(server.bind_http(address, HttpOptions::new()).await?)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let address = match args.as_slice() {
        [] => DEFAULT_ADDRESS,
        [address] => address.as_str(),
        _ => return Err("usage: conformance_server [ADDRESS]   (default 127.0.0.1:0)".into()),
    };
    let http = serve(address).await?;
    eprintln!("conformance_server: serving at {}", http.url());
    http.wait().await?;
    Ok(())
}
