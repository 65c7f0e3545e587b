//! The maintenance tools of `examples/maintenance.rs`, served over the Model Context Protocol
//! on stdio, so that a desktop MCP client (or any MCP client) can use them, or over streamable
//! HTTP:
//!
//! ```text
//! cargo run --example mcp_server --features mcp
//! cargo run --example mcp_server --features mcp -- --http 127.0.0.1:8181
//! cargo run --example mcp_server --features mcp -- --http 127.0.0.1:8081 --stateless
//! ```
//!
//! The same declarations (`LookupWindow` and `RestartService` of `tool_examples::maintenance`)
//! serve both the agent loop and MCP, with the same guarantees: `tools/list` offers only what
//! the principal's policies allow, every `tools/call` re-checks availability, validates the
//! arguments against the schema and keeps internal errors from the client (`the tool failed`),
//! while this program prints them, unredacted, on standard error. A restart of a production service needs approval: the
//! client's user is asked (MCP elicitation), and a client that cannot ask is told so; the
//! restart never runs unapproved (H6).
//!
//! # Who is calling
//!
//! Over HTTP, each request's bearer token names its principal: `guest-token`,
//! `operator-token` and `admin-token` by default, or the `token=name:role` list in
//! `MAINTENANCE_TOKENS` (`s3cret=ada:operator,t0p=root:admin`). A request without a known
//! token is refused with `401` before any MCP processing.
//!
//! # Several replicas behind a load balancer
//!
//! With `--stateless` the HTTP server keeps no session and answers with plain JSON
//! (`HttpOptions::new().stateless().json_answers()`): each request stands alone, authenticated
//! by its own bearer token, so any number of these processes behind an ordinary round-robin
//! load balancer (HAProxy, nginx) serve one client with no session affinity. A restart that
//! needs approval asks a client on protocol 2026-07-28 or later with an `input_required`
//! result, and the client's retry with the answer may land on any replica; a client on an
//! older protocol cannot be asked without a session and is told so at once. The question's
//! `requestState` is sealed with the server's key (H10), so the replicas must share one: set
//! `MAINTENANCE_STATE_KEY` to the same secret on each (at least 32 random bytes, such as
//! `openssl rand -base64 32` prints); without it each process makes its own, and a question
//! asked by one replica is not approved on another. Each process prints a line per call it
//! served on standard error. A replica accepts loopback `Host`s
//! only, unless `MAINTENANCE_ALLOWED_HOSTS` lists, instead, the names clients reach the
//! balancer by (`mcp.example.com,mcp.example.com:8080`). `examples/tests/scale_out.rs` runs two
//! replicas behind HAProxy, and the guide's chapter `tool_runtime::guide::mcp_server` shows the
//! configuration.
//!
//! Over stdio, the peer is whoever started this process, so the principal comes from the
//! process environment, never from the client's arguments:
//!
//! - `MAINTENANCE_USER`: the principal's name (default `operator`);
//! - `MAINTENANCE_ROLE`: `guest`, `operator` (default) or `admin`. A guest is offered no tool,
//!   an operator `lookup-window`, an admin `restart-service` as well.
//!
//! # Connecting a desktop MCP client
//!
//! 1. Build the server once:
//!
//!    ```text
//!    cargo build --release --example mcp_server --features mcp
//!    ```
//!
//!    The binary is `target/release/examples/mcp_server` (`mcp_server.exe` on Windows).
//! 2. Add it to the client's MCP server configuration, with its absolute path. Most desktop
//!    clients read a JSON file with an `mcpServers` map (for Claude Desktop,
//!    `claude_desktop_config.json`, opened from its settings under *Developer*):
//!
//!    ```json
//!    {
//!      "mcpServers": {
//!        "maintenance": {
//!          "command": "/absolute/path/to/target/release/examples/mcp_server",
//!          "env": { "MAINTENANCE_USER": "ada", "MAINTENANCE_ROLE": "operator" }
//!        }
//!      }
//!    }
//!    ```
//!
//! 3. Restart the client. Its tool list shows `lookup-window` (and `restart-service` for an
//!    admin); ask it "When is svc-42 down next?".
//!
//! Standard output carries the protocol: this program writes nothing else there; what it
//! prints goes to standard error (most desktop clients show it in their MCP log). To try it without a desktop client, start it
//! from any MCP client over stdio, such as the MCP Inspector or the official Python SDK's
//! `stdio_client`.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The program lives in the library (`tool_examples::serve::main`), so that the tests run
    // it as it is, as separate processes. Its error is printed in words (`Display`).
    tool_examples::exit_with(tool_examples::serve::main(&args).await)
}
