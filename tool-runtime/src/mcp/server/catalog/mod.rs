//! What an [`McpServer`](super::McpServer) serves besides tools (M7): its resources, resource
//! templates and prompts, checked together at `build()`, and what their requests share: a
//! handler's failure redacted as a tool's is (E2, E3), availability as offering (A1–A5), a
//! span and a metric per request (K2, K5).
//!
//! - `problem`: what is wrong with a declared item ([`CatalogProblem`]), and why a request
//!   did not produce its answer.
//! - `requests`: each request as a session receives it.
//! - `listen`: `subscriptions/listen`, the stream of changes of 2026-07-28.
//! - `asking`: a prompt's or a resource's handler asking its client on 2026-07-28, in the
//!   answer.
//! - `hooks`: application code around each read and get ([`CatalogHook`]).
//! - `handler`: a reader or a handler as an item holds it, its arguments validated first.
//! - `run`: a handler run for one request between the hooks.
//! - `typed_args`: a template's URI variables and a prompt's arguments, parsed and validated
//!   like a tool's input (S2).

pub(crate) mod asking;
pub(crate) mod handler;
pub(crate) mod hooks;
pub(crate) mod listen;
pub(crate) mod problem;
pub(crate) mod requests;
pub(crate) mod run;
pub(crate) mod typed_args;

use rmcp::ErrorData;
use tool_core::error::find_in_chain;
use tool_core::{BoxError, ToolError};

use super::prompts::McpPrompt;
use super::resources::McpResource;
use super::resources::subscriptions::Subscriptions;
use crate::telemetry::metrics::{self, McpRecord, Side};
pub(crate) use hooks::CatalogHooks;
pub use hooks::{CatalogEnd, CatalogHook, CatalogItem, CatalogRequest};
pub(crate) use problem::{CatalogProblem, Failure};

/// A server's resources and prompts, and the subscriptions to its resources.
#[derive(Default)]
pub(crate) struct Catalog {
    /// The resources and templates, in declaration order.
    pub(crate) resources: Vec<McpResource>,
    /// The prompts, in declaration order.
    pub(crate) prompts: Vec<McpPrompt>,
    /// Which sessions asked to hear of which resource's changes.
    pub(crate) subscriptions: Subscriptions,
    /// The hooks around each read and get.
    pub(crate) hooks: CatalogHooks,
}

impl Catalog {
    /// The catalog of `resources` and `prompts`, with a problem for each declared wrong or
    /// sharing a URI or name.
    pub(crate) fn check(
        resources: Vec<McpResource>,
        prompts: Vec<McpPrompt>,
        hooks: CatalogHooks,
        problems: &mut Vec<CatalogProblem>,
    ) -> Self {
        let mut uris: Vec<&str> = Vec::new();
        for resource in &resources {
            if let Some(problem) = resource.problem() {
                problems.push(problem);
            }
            if uris.contains(&resource.uri()) {
                problems.push(CatalogProblem::DuplicateUri {
                    uri: resource.uri().to_owned(),
                });
            }
            uris.push(resource.uri());
        }
        let mut names: Vec<&str> = Vec::new();
        for prompt in &prompts {
            if let Some(problem) = prompt.problem() {
                problems.push(problem);
            }
            if names.contains(&prompt.name()) {
                problems.push(CatalogProblem::DuplicatePrompt {
                    name: prompt.name().to_owned(),
                });
            }
            names.push(prompt.name());
        }
        Self {
            resources,
            prompts,
            subscriptions: Subscriptions::default(),
            hooks,
        }
    }

    /// The resource or template that serves `uri`, with its variables' values.
    pub(crate) fn resource_for(&self, uri: &str) -> Option<(&McpResource, Vec<(String, String)>)> {
        self.resources
            .iter()
            .find_map(|resource| resource.matches(uri).map(|values| (resource, values)))
    }

    /// The prompt named `name`.
    pub(crate) fn prompt(&self, name: &str) -> Option<&McpPrompt> {
        self.prompts.iter().find(|prompt| prompt.name() == name)
    }
}

/// The JSON-RPC error a client gets for `failure` of the `what` (`resource`, `prompt`): the
/// violations as invalid params; a handler's failure as `the {what} failed`, unless its chain
/// holds a [`ToolError`], whose own text goes (E2); a hook's refusal as its message; a hook's
/// giving up, a hook's or a validator's panic as `the {what} failed`. The unredacted error
/// goes to `tracing` (E3).
pub(crate) fn answer_failure(failure: Failure, what: &str, id: &str) -> ErrorData {
    let item = tool_core::violation::preview_str(id);
    match failure {
        Failure::Invalid(violations) => ErrorData::invalid_params(violations, None),
        Failure::Denied(message) => ErrorData::internal_error(message, None),
        Failure::Failed(error) => {
            tracing::error!(
                item = %item,
                kind = what,
                error = %error,
                "an MCP {what} handler failed; the client was told no more than its ToolError"
            );
            let text = find_in_chain::<ToolError>(error.as_ref())
                .map_or_else(|| format!("the {what} failed"), ToString::to_string);
            ErrorData::internal_error(text, None)
        }
        Failure::Panicked(error) => {
            tracing::error!(
                item = %item,
                kind = what,
                error = %error,
                "an MCP {what} request failed: a hook or a validator panicked"
            );
            ErrorData::internal_error(format!("the {what} failed"), None)
        }
        Failure::Ended(error) => {
            tracing::error!(
                item = %item,
                kind = what,
                error = %format_args!("{error:#}"),
                "a hook gave up an MCP {what} request; the client was told it failed"
            );
            ErrorData::internal_error(format!("the {what} failed"), None)
        }
    }
}

/// The answer to a policy that failed while serving `what`: logged, never sent (A6).
pub(crate) fn policy_failed(error: &BoxError, what: &str) -> ErrorData {
    tracing::error!(
        error = %error,
        "an availability policy failed while serving an MCP {what}; the request is refused"
    );
    ErrorData::internal_error(format!("the {what} is unavailable"), None)
}

/// Ends a catalog request (`resources/read`, `prompts/get`) of `method`, started at `started`
/// in `span`: a refusal's JSON-RPC code as the span's `error.type` and
/// `rpc.response.status_code` (K2), and `mcp.server.operation.duration` (K5).
pub(crate) fn finished<T>(
    span: &tracing::Span,
    method: &'static str,
    protocol_version: Option<String>,
    started: std::time::Instant,
    answer: &Result<T, ErrorData>,
) {
    let error_type = answer.as_ref().err().map(|error| error.code.0.to_string());
    if let Some(code) = &error_type {
        span.record("error.type", code.as_str());
        span.record("rpc.response.status_code", code.as_str());
    }
    metrics::record_mcp(&McpRecord {
        side: Side::Server,
        method,
        tool: None,
        protocol_version,
        transport: None,
        error_type,
        elapsed: started.elapsed(),
    });
}
