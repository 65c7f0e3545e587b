//! M10: the `Mcp-Param-*` headers of a 2026-07-28 `tools/call` over streamable HTTP are checked
//! against the call's arguments. A tool whose input schema marks a parameter with
//! `x-mcp-header` has that parameter mirrored into a header by its client; the server answers
//! `400` to a header that contradicts the body, to one whose encoding is not the protocol's
//! (`=?base64?…?=` with bytes that are not Base64), to a missing one, and to one sent for a
//! null parameter; nothing runs. A call whose headers agree is answered as any call.
#![cfg(feature = "mcp")]

mod support {
    pub mod raw_http;
}

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use support::raw_http::RawConnection;
use tool_runtime::mcp::{HttpOptions, HttpServer, JsonSchemaValidator, McpServer};
use tool_runtime::{Context, Tool};

/// A server of one tool, `forecast`, whose `region` goes in the `Mcp-Param-Region` header;
/// and how many times its handler ran.
async fn serve(options: HttpOptions) -> (HttpServer, Arc<AtomicUsize>) {
    let schema = json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "days": {"type": "integer"},
        },
        "required": ["days"],
    });
    let validator = JsonSchemaValidator::new(&schema).expect("a valid schema");
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let tool = Tool::builder("forecast", "The forecast of a region.")
        .dynamic_handler(schema, validator, move |_ctx: Context, args: Value| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, std::convert::Infallible>(format!("sunny in {}", args["region"])) }
        })
        .build();
    let server = McpServer::builder()
        .tool(tool)
        .build()
        .expect("the tool is declared right");
    let http = server
        .bind_http("127.0.0.1:0", options)
        .await
        .expect("binds");
    (http, runs)
}

/// A 2026-07-28 `tools/call` of `forecast` with `arguments`, the standard headers, and
/// `region` (the `Mcp-Param-Region` header) when given.
async fn call(http: &HttpServer, arguments: Value, region: Option<&str>) -> (u16, Value) {
    let message = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {
            "name": "forecast",
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "m10", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    });
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "forecast"),
    ];
    if let Some(region) = region {
        headers.push(("Mcp-Param-Region", region));
    }
    let mut connection = RawConnection::open(http.local_addr()).await;
    let response = connection.post(&headers, &message).await;
    let answer = response
        .messages()
        .into_iter()
        .next()
        .unwrap_or(Value::Null);
    (response.status, answer)
}

/// M10, on stateless and stateful servers alike: each header that does not say what the body
/// says is refused `400` before the call is read, and the handler never runs.
#[tokio::test]
async fn m10_mcp_param_headers_that_contradict_the_body_are_refused_400() {
    for options in [
        HttpOptions::new().stateless().json_answers(),
        HttpOptions::new().stateless(),
        HttpOptions::new(),
    ] {
        let (http, runs) = serve(options).await;
        let args = json!({"region": "us-west1", "days": 3});
        let refused = [
            ("another value", args.clone(), Some("eu-north1")),
            (
                "a broken encoding",
                args.clone(),
                Some("=?base64?SGVs!!!bG8=?="),
            ),
            ("no header for a value", args.clone(), None),
            (
                "a header for null",
                json!({"region": null, "days": 3}),
                Some("us-west1"),
            ),
        ];
        for (what, arguments, header) in refused {
            let (status, answer) = call(&http, arguments, header).await;
            assert_eq!(status, 400, "{what}: {answer}");
            assert!(
                answer["error"]["code"].is_i64(),
                "{what}: a JSON-RPC error: {answer}"
            );
        }
        assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing ran");

        // Headers that agree, plain or Base64 (`us-west1`), and none for an absent value.
        for header in [Some("us-west1"), Some("=?base64?dXMtd2VzdDE=?=")] {
            let (status, answer) = call(&http, args.clone(), header).await;
            assert_eq!(status, 200, "{answer}");
            assert_eq!(
                answer["result"]["content"][0]["text"],
                "sunny in \"us-west1\""
            );
        }
        let (status, answer) = call(&http, json!({"days": 1}), None).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(
            runs.load(Ordering::SeqCst),
            3,
            "each agreeing call ran once"
        );
        http.shutdown().await.expect("shuts down");
    }
}
