//! The two Rust servers, each run as a process of its own (`mcp-load serve ours|rmcp`): the
//! same tool (the harness's `triage-ticket`: the same inputs, handler body and result), served
//! over MCP streamable HTTP on 127.0.0.1, stateless, answering with plain JSON bodies.
//!
//! Each prints one line, `listening ADDR`, once it accepts connections, then serves until it
//! is killed.

use std::convert::Infallible;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::serve::ListenerExt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use tokio::net::{TcpListener, TcpStream};
use tool_bench::shared::{Triage, triage};
use tool_runtime::mcp::auth::Authorization;
use tool_runtime::mcp::{HttpOptions, McpServer};
use tool_runtime::{Context, tool as our_tool};

/// Which server a process serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// tool-runtime's `McpServer`: the whole pipeline (availability, validation, redaction).
    Ours,
    /// The same `McpServer` as an OAuth protected resource (Z1–Z3): every call's bearer
    /// token, a JWT, verified against its issuer's JWKS (fetched once, then cached).
    OursJwt,
    /// A bare rmcp server: `#[tool_router]`, `StreamableHttpService`, no pipeline.
    Rmcp,
}

/// Serves `which` on a runtime of `workers` worker threads until the process is killed.
///
/// # Errors
///
/// When the runtime cannot be built, the port cannot be bound, or serving fails.
pub fn serve(which: Which, workers: usize) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build the server's runtime: {e}"))?;
    runtime.block_on(async move {
        match which {
            Which::Ours => serve_ours().await,
            Which::OursJwt => serve_ours_jwt().await,
            Which::Rmcp => serve_rmcp().await,
        }
    })
}

/// Tells the load generator where the server listens.
fn announce(addr: SocketAddr) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening {addr}")
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot announce the address: {e}"))
}

// --- ours -------------------------------------------------------------------------------------

/// Triage a ticket: file it in a queue and score it.
#[our_tool(name = "triage-ticket", available = may_triage)]
pub fn triage_ticket(input: tool_bench::ours::Ticket) -> Triage {
    triage(
        &input.title,
        &input.reporter,
        input.priority,
        input.estimate_hours,
        input.kind.as_str(),
        &input.labels,
    )
}

/// The tool's availability policy (A1): it passes, but is asked on every call (A4), as a
/// policy of a real server is.
///
/// # Errors
///
/// Never.
pub fn may_triage(_ctx: &Context) -> Result<bool, Infallible> {
    Ok(true)
}

async fn serve_ours() -> Result<(), String> {
    // `MCP_LOAD_DIRECT_CALLS=0`: every call through rmcp's framing, to measure what direct
    // calls save.
    let direct = std::env::var("MCP_LOAD_DIRECT_CALLS").map_or(true, |v| v != "0");
    let options = HttpOptions::new()
        .stateless()
        .json_answers()
        .direct_calls(direct);
    let http = ours()?
        .bind_http("127.0.0.1:0", options)
        .await
        .map_err(|e| format!("cannot serve: {e}"))?;
    announce(http.local_addr())?;
    http.wait()
        .await
        .map_err(|e| format!("the server failed: {e}"))
}

/// Our server of the harness's tool.
fn ours() -> Result<McpServer, String> {
    McpServer::builder()
        .name("tool-runtime-load")
        .tool(TriageTicket)
        .build()
        .map_err(|e| format!("the tool is declared wrong: {e}"))
}

/// Our server as a protected resource: announces `listening ADDR bearer TOKEN`, the token the
/// load generator sends.
async fn serve_ours_jwt() -> Result<(), String> {
    let issuer = crate::issuer::Issuer::start().await?;
    // The canonical resource names the port, so the port is chosen first.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let authorization = Authorization::jwt(&resource, &issuer.url)
        .map_err(|e| format!("the authorization is configured wrong: {e}"))?;
    let options = HttpOptions::new()
        .stateless()
        .json_answers()
        .authorization(authorization);
    let http = ours()?
        .bind_http(&format!("127.0.0.1:{port}"), options)
        .await
        .map_err(|e| format!("cannot serve: {e}"))?;
    let token = issuer.token(&resource)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening {} bearer {token}", http.local_addr())
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot announce the address: {e}"))?;
    drop(out);
    http.wait()
        .await
        .map_err(|e| format!("the server failed: {e}"))
}

// --- rmcp -------------------------------------------------------------------------------------

/// The bare rmcp server: the harness's rmcp tool, its router built once and shared (the
/// service factory runs for every stateless request; cloning an `Arc` is rmcp's best case).
#[derive(Clone)]
pub struct RmcpServer {
    tool_router: Arc<ToolRouter<Self>>,
}

#[tool_router]
impl RmcpServer {
    /// The server, its router built.
    pub fn new() -> Self {
        Self {
            tool_router: Arc::new(Self::tool_router()),
        }
    }

    /// Triage a ticket: file it in a queue and score it.
    #[tool(name = "triage-ticket")]
    pub fn triage_ticket(
        &self,
        Parameters(input): Parameters<tool_bench::mcp::Ticket>,
    ) -> Json<Triage> {
        Json(triage(
            &input.title,
            &input.reporter,
            input.priority,
            input.estimate_hours,
            input.kind.as_str(),
            &input.labels,
        ))
    }
}

impl Default for RmcpServer {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpServer {}

async fn serve_rmcp() -> Result<(), String> {
    let server = RmcpServer::new();
    // What `HttpOptions::stateless().json_answers()` sets on our side.
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().route_service("/mcp", service);
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot bind: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("no local address: {e}"))?;
    announce(addr)?;
    // TCP_NODELAY on every accepted socket, as our server sets it.
    axum::serve(listener.tap_io(nodelay), router)
        .await
        .map_err(|e| format!("the server failed: {e}"))
}

fn nodelay(stream: &mut TcpStream) {
    let _ = stream.set_nodelay(true);
}
