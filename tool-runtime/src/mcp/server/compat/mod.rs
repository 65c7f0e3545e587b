//! The one seam where the server steps past rmcp's typed messages: code kept for speed or
//! for an older protocol, each part with the figure or the client that justifies it and the
//! condition for deleting it. Every call either part sees still enters the one way in,
//! `Session::call` (`tools_call`), and through it `crate::call::enter`: nothing here decides
//! anything about a call.
//!
//! - `direct_call`, for speed: a stateless HTTP server answering JSON answers a plain
//!   `tools/call` without rmcp's per-request service, tasks and channels. The benchmark of
//!   MCP streamable HTTP under load (`benches/load`, 64 clients, stateless JSON) measured
//!   tool-runtime at 0.91× bare rmcp's throughput without it and 1.63× with it (1.59× in the
//!   run of `benches/RESULTS.md`, server CPU per call 0.61× rmcp's). Delete it when that
//!   benchmark, run with [`HttpOptions::direct_calls`](crate::mcp::HttpOptions::direct_calls)
//!   off, stays within 5 % of the figure with it on (rmcp's stateless service no longer
//!   costing more than the call), and keep the `mcp_direct_calls` test's comparison of both
//!   ways until then.
//! - `tasks`, for protocol 2025-11-25: its task-augmented `tools/call` (`task`), the
//!   `execution.taskSupport` of `tools/list`, `capabilities.tasks` and the `tasks/*` methods
//!   are not in rmcp 3.11's types (`CallToolRequestParams` has no `task`, `Tool` no
//!   `execution`, and it routes `tasks/get` and `tasks/cancel` to the 2026-07-28 Tasks
//!   extension), so a typed `Transport` wrapper would receive them already dropped: they are
//!   rewritten on the JSON-RPC bytes, on the way in and out. Clients of 2025-11-25 tasks need
//!   it: the official TypeScript SDK's client makes, polls, lists and cancels such tasks
//!   (`examples/tests/mcp_tasks_m5.rs`), and `tool-runtime/tests/mcp_tasks_m5.rs` holds the
//!   messages a client sees. Delete it when rmcp's
//!   types carry those fields (then map them in a `Transport` wrapper over
//!   `RxJsonRpcMessage`/`TxJsonRpcMessage`), or when 2025-11-25 tasks are no longer served.

mod direct_call;
pub(crate) mod tasks;

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use tool_core::CancellationToken;

use super::request::McpTransport;
use super::session::Session;
use super::shared::Shared;
use super::tasks::Tasks;

pub(crate) use direct_call::DirectCalls;

/// What of the seam one HTTP server mounts: its direct calls, its task rewriting, or neither.
pub(crate) struct Mount {
    direct_calls: Option<Arc<DirectCalls>>,
    /// The server's tasks, when any tool runs as one (M5).
    tasks: Option<Arc<Tasks>>,
    max_body: usize,
}

impl Mount {
    /// The seam of a server of `shared` (`fast`: stateless, JSON answers, direct calls on;
    /// `max_body`: rmcp's limit), and its direct calls. With tasks (M5), calls are rewritten
    /// on their way to rmcp: none is answered directly.
    pub(crate) fn new(
        shared: &Arc<Shared>,
        fast: bool,
        max_body: usize,
        shutdown: &CancellationToken,
    ) -> (Self, Option<Arc<DirectCalls>>) {
        let tasks = shared.tasks.enabled().then(|| Arc::clone(&shared.tasks));
        let direct_calls = (fast && tasks.is_none()).then(|| {
            let session = Session::new(Arc::clone(shared), McpTransport::Http).with_sessions(false);
            Arc::new(DirectCalls::new(session, max_body, shutdown.child_token()))
        });
        let mount = Self {
            direct_calls: direct_calls.clone(),
            tasks,
            max_body,
        };
        (mount, direct_calls)
    }

    /// `router` (rmcp's service on its path) with the seam's layers.
    pub(crate) fn layers(self, mut router: Router) -> Router {
        if let Some(calls) = self.direct_calls {
            router =
                router.route_layer(middleware::from_fn(move |request: Request, next: Next| {
                    direct_call::serve(Arc::clone(&calls), request, next)
                }));
        }
        if let Some(tasks) = self.tasks {
            // M5: each message through the task rewriting, both ways.
            let max_body = self.max_body;
            router = router.layer(middleware::from_fn(move |request: Request, next: Next| {
                tasks::http::rewrite(Arc::clone(&tasks), max_body, request, next)
            }));
        }
        router
    }
}
