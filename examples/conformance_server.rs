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
//! [`mcp_names`] maps the declared names to the names the suite calls. That mapping is the one
//! place where the server's MCP names are decided: once [`McpServerBuilder`] can publish a
//! tool under another MCP name, [`builder`] gives each tool its name from here.
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
//! - `test-reconnection`: answers at once, on the event stream of its `tools/call` (which the
//!   server opens with a priming event and a `retry` field). The `server-sse-polling` scenario
//!   would also like the tool to close that stream before its answer, for the client to
//!   resume it with `Last-Event-ID`; a tool cannot do that, and the suite notes it (`INFO`).

use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::mcp::{
    HttpOptions, HttpServer, JsonSchemaValidator, McpServer, McpServerBuilder,
};
use tool_runtime::{BoxError, Context, Image, Schema, Tool, ToolError, WithImages};

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
    ]
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
                "type": "object",
                "properties": {
                    "street": { "type": "string" },
                    "city": { "type": "string" }
                }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" }
        },
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

/// The conformance server's tools, in the order `tools/list` gives them.
///
/// # Errors
///
/// The 2020-12 schema is refused by the validator.
pub fn builder() -> Result<McpServerBuilder, BoxError> {
    Ok(McpServer::builder()
        .name("tool-runtime-conformance")
        .version(env!("CARGO_PKG_VERSION"))
        .tool(simple_text())
        .tool(image_content())
        .tool(error_handling())
        .tool(with_progress())
        .tool(json_schema_2020_12()?)
        .tool(reconnection()))
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
