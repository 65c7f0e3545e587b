//! Shared by the MCP integration tests (`tests/mcp_*.rs`): the tools a test server serves,
//! the principal its context carries, and how to start the Python peers.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use tokio::sync::Notify;
use tool_runtime::{Context, Permanent, Schema, Tool, ToolError};

mod peers;

/// Arguments of any shape (an object root).
pub type Args = BTreeMap<String, serde_json::Value>;

/// Who a request is from, as the application's context function authenticated it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Principal {
    pub name: &'static str,
    pub admin: bool,
}

impl Principal {
    pub const OPERATOR: Principal = Principal {
        name: "operator",
        admin: false,
    };
    pub const ADMIN: Principal = Principal {
        name: "admin",
        admin: true,
    };
}

/// Input of `lookup-window`.
#[derive(Schema, Debug)]
pub struct WindowQuery {
    /// The service identifier supplied by the user.
    #[schema(min_len = 1, max_len = 64, pattern = "^[a-z0-9-]+$")]
    pub service_id: String,
    /// How many days ahead to look.
    #[schema(default = 7, range = 1..=30)]
    pub days: u32,
}

/// Result of `lookup-window`: a JSON object (E1: text plus `structuredContent`).
#[derive(Serialize)]
pub struct Window {
    pub service_id: String,
    pub days: u32,
    pub starts_at: &'static str,
}

/// Input of `greet`.
#[derive(Schema, Debug)]
pub struct Greeting {
    /// Whom to greet.
    pub who: String,
}

/// The tools a test server serves, and what the tests observe of their runs.
pub struct Served {
    /// In declaration order: `lookup-window`, `greet`, `admin-reset` (hidden unless the
    /// principal is an admin), `reject`, `fail`, `crash`, `doom`, `policy-error`, `slow`.
    pub tools: Vec<Tool>,
    /// How many times `admin-reset`'s handler ran.
    pub admin_runs: Arc<AtomicUsize>,
    /// Notified when `slow` saw its context cancelled.
    pub slow_cancelled: Arc<Notify>,
}

fn principal(ctx: &Context) -> Principal {
    ctx.get::<Principal>()
        .copied()
        .unwrap_or(Principal::OPERATOR)
}

/// The tools of the test servers.
pub fn served() -> Served {
    let admin_runs = Arc::new(AtomicUsize::new(0));
    let slow_cancelled = Arc::new(Notify::new());
    let runs = Arc::clone(&admin_runs);
    let cancelled = Arc::clone(&slow_cancelled);
    let tools = vec![
        Tool::builder(
            "lookup-window",
            "Finds the maintenance window of a service.",
        )
        .handler(|_ctx: Context, q: WindowQuery| async move {
            Ok::<_, std::io::Error>(Window {
                service_id: q.service_id,
                days: q.days,
                starts_at: "2026-01-06T02:00:00Z",
            })
        })
        .build(),
        Tool::builder("greet", "Greets someone.")
            .handler(|_ctx: Context, g: Greeting| async move {
                Ok::<_, std::io::Error>(format!("Hello, {}!", g.who))
            })
            .build(),
        Tool::builder("admin-reset", "Resets everything. Admins only.")
            .handler(move |_ctx: Context, _args: Args| {
                runs.fetch_add(1, Ordering::SeqCst);
                async move { Ok::<_, std::io::Error>("reset") }
            })
            .available_fn(|ctx: &Context| Ok::<_, std::io::Error>(principal(ctx).admin))
            .build(),
        Tool::builder("reject", "Always finds no window.")
            .handler(|_ctx: Context, _args: Args| async move {
                Err::<String, _>(ToolError::new("No maintenance window is scheduled."))
            })
            .build(),
        Tool::builder("fail", "Always fails with a secret in its error.")
            .handler(|_ctx: Context, _args: Args| async move {
                Err::<String, _>(std::io::Error::other(
                    "cannot reach db://admin:hunter2@db.internal",
                ))
            })
            .build(),
        Tool::builder("crash", "Always panics.")
            .handler(|_ctx: Context, _args: Args| async move { explode() })
            .build(),
        Tool::builder("doom", "Always fails permanently.")
            .handler(|_ctx: Context, _args: Args| async move {
                Err::<String, _>(Permanent::new(std::io::Error::other("the disk is on fire")))
            })
            .build(),
        Tool::builder("policy-error", "Its policy fails during calls.")
            .handler(|_ctx: Context, _args: Args| async move { Ok::<_, std::io::Error>("ran") })
            .available_fn(|ctx: &Context| {
                // Listing has no call; a call does: the policy fails only then (A6).
                if ctx.call().is_some() {
                    Err(std::io::Error::other("the policy backend is down"))
                } else {
                    Ok(true)
                }
            })
            .build(),
        Tool::builder("slow", "Waits until it is cancelled.")
            .handler(move |ctx: Context, _args: Args| {
                let cancelled = Arc::clone(&cancelled);
                async move {
                    ctx.cancelled().await;
                    cancelled.notify_one();
                    Ok::<_, std::io::Error>("cancelled")
                }
            })
            .build(),
    ];
    Served {
        tools,
        admin_runs,
        slow_cancelled,
    }
}

fn explode() -> Result<String, std::io::Error> {
    panic!("the handler exploded")
}

/// The path of a file under `tests/support/mcp/`.
pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("support")
        .join("mcp")
        .join(name)
}

/// The Python interpreter that runs the peers: the tests' own environment with the pinned MCP
/// Python SDK, made on first use (`peers.rs`), or `$PYTHON` when set. Without it these tests
/// fail (never skip) with one message naming what is missing; the other tests still run.
pub fn python() -> tokio::process::Command {
    static CHECKED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let python = match CHECKED.get_or_init(peers::interpreter) {
        Ok(python) => python,
        Err(message) => panic!("{message}"),
    };
    let mut command = tokio::process::Command::new(python);
    command.kill_on_drop(true);
    command
}

/// How a run of a Python client over stdio ended: whether it exited successfully, what it
/// wrote to its standard error (its checks, one line each), and the task serving it.
pub struct ClientRun {
    pub success: bool,
    pub report: String,
    pub serving: tokio::task::JoinHandle<Result<(), tool_runtime::mcp::ServeError>>,
}

/// Starts the Python client `script_name` (in this folder) with `args`, serves `server` to it
/// over its standard input and output, as a desktop client's server is served, and waits for
/// it to exit (at most two minutes; a client that hangs is killed and the test fails with
/// its report).
pub async fn run_python_client(
    server: tool_runtime::mcp::McpServer,
    script_name: &str,
    args: &[String],
) -> ClientRun {
    use std::process::Stdio;
    let mut child = python()
        .arg(script(script_name))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python starts");
    let to_client = child.stdin.take().expect("piped stdin");
    let from_client = child.stdout.take().expect("piped stdout");
    let mut errors = child.stderr.take().expect("piped stderr");
    let report = tokio::spawn(async move {
        let mut text = String::new();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut errors, &mut text).await;
        text
    });
    let serving = tokio::spawn(async move { server.serve_io(from_client, to_client).await });
    let status = tokio::time::timeout(std::time::Duration::from_secs(120), child.wait()).await;
    if status.is_err() {
        let _ = child.kill().await;
    }
    let report = report.await.expect("stderr is read");
    let status = status
        .unwrap_or_else(|_| panic!("the Python client {script_name} hung:\n{report}"))
        .expect("the Python client runs");
    ClientRun {
        success: status.success(),
        report,
        serving,
    }
}

/// Our client, connected to `server` over an in-process byte stream (the server runs in a task
/// of the current runtime).
pub async fn connect_in_process(
    server: tool_runtime::mcp::McpServer,
) -> tool_runtime::mcp::McpToolset {
    let builder =
        tool_runtime::mcp::McpToolset::builder().handshake(tool_runtime::mcp::Handshake::Auto);
    connect_in_process_with(server, builder).await
}

/// As [`connect_in_process`], the client made by `builder` (its handshake, its elicitor).
pub async fn connect_in_process_with(
    server: tool_runtime::mcp::McpServer,
    builder: tool_runtime::mcp::McpToolsetBuilder,
) -> tool_runtime::mcp::McpToolset {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    builder
        .connect_io(client_read, client_write)
        .await
        .expect("our client connects to our server")
}
