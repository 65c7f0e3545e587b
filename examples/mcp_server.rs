//! The maintenance tools of `examples/maintenance.rs`, served over the Model Context Protocol
//! on stdio, so that a desktop MCP client (or any MCP client) can use them, or over streamable
//! HTTP:
//!
//! ```text
//! cargo run --example mcp_server --features mcp
//! cargo run --example mcp_server --features mcp -- --http 127.0.0.1:8080
//! ```
//!
//! The same declarations ([`LookupWindow`], [`RestartService`]) serve both the agent loop and
//! MCP, with the same guarantees: `tools/list` offers only what the principal's policies allow,
//! every `tools/call` re-checks availability, validates the arguments against the schema and
//! keeps internal errors from the client (`the tool failed`), while this program prints them,
//! unredacted, on standard error. A restart of a production service needs approval: the
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

use std::error::Error;
use std::net::SocketAddr;

use tool_examples::maintenance::{Principal, Role, principal};
use tool_examples::serve::{self, Tokens};
use tool_runtime::BoxError;
use tool_runtime::mcp::{HttpOptions, McpRequest};

/// The principal this process serves over stdio, from its environment.
fn principal_from_env() -> Result<Principal, BoxError> {
    let name: &'static str = std::env::var("MAINTENANCE_USER")
        .map(|name| &*Box::leak(name.into_boxed_str()))
        .unwrap_or("operator");
    let role = match std::env::var("MAINTENANCE_ROLE").as_deref() {
        Err(_) | Ok("operator") => Role::Operator,
        Ok("guest") => Role::Guest,
        Ok("admin") => Role::Admin,
        Ok(other) => {
            return Err(
                format!("MAINTENANCE_ROLE is {other:?}: use guest, operator or admin").into(),
            );
        }
    };
    Ok(principal(name, role))
}

/// What the command line asks for: stdio, or HTTP on an address.
fn http_address() -> Result<Option<SocketAddr>, BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(None),
        [flag, addr] if flag == "--http" => Ok(Some(addr.parse().map_err(|e| {
            format!("--http {addr:?} is not an address such as 127.0.0.1:8080: {e}")
        })?)),
        _ => Err("usage: mcp_server [--http ADDRESS]   (stdio without arguments)".into()),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error + Send + Sync>> {
    let base = serve::services();
    match http_address()? {
        None => {
            let who = principal_from_env()?;
            eprintln!(
                "mcp_server: serving the maintenance tools on stdio for {} ({:?})",
                who.name, who.role
            );
            // Every request's context: the principal this process was started for, and the
            // application's services. Built by the application, never from the arguments.
            let ctx = base.with(who);
            let server = serve::builder()
                .context(move |_request: McpRequest| {
                    let ctx = ctx.clone();
                    async move { Ok::<_, BoxError>(ctx) }
                })
                .build()?;
            server.serve_stdio().await?;
        }
        Some(addr) => {
            let tokens = match std::env::var("MAINTENANCE_TOKENS") {
                Ok(spec) => Tokens::parse(&spec)?,
                Err(_) => Tokens::demo(),
            };
            let server = serve::builder()
                .context(move |request: McpRequest| {
                    let ctx = tokens.context(&request, &base);
                    async move { ctx }
                })
                .build()?;
            let http = server.bind_http(addr, HttpOptions::default()).await?;
            eprintln!(
                "mcp_server: serving the maintenance tools at {} (bearer tokens: {})",
                http.url(),
                if std::env::var_os("MAINTENANCE_TOKENS").is_some() {
                    "from MAINTENANCE_TOKENS"
                } else {
                    "guest-token, operator-token, admin-token"
                }
            );
            http.wait().await?;
        }
    }
    Ok(())
}
