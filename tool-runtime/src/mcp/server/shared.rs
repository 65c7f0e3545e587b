//! [`Shared`]: what every session of an [`McpServer`](super::McpServer) shares, built once by
//! `McpServerBuilder::build`, and the application's functions it holds.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{ServerConfig, Tool as McpTool};
use tool_core::panic::CatchUnwind;
use tool_core::policy::BoxFuture;
use tool_core::{BoxError, Context, Tool};

use crate::agent::toolset::ToolSet;

use super::catalog::Catalog;
use super::request::{McpCall, McpRequest};
use super::request_state::RequestStates;
use super::search::Deferred;
use super::tasks::Tasks;

/// Builds the [`Context`] of one request from what its transport authenticated.
pub(crate) type ContextFn =
    Arc<dyn Fn(McpRequest) -> BoxFuture<'static, Result<Context, BoxError>> + Send + Sync>;

/// Observes every call's outcome, unredacted (E3).
pub(crate) type OutcomeFn = Arc<dyn Fn(&McpCall<'_>) + Send + Sync>;

/// What every session of a server shares.
pub(crate) struct Shared {
    /// The tools, their declared names, hooks, limits and state key, checked at `build()`
    /// (U4).
    pub(crate) set: ToolSet,
    /// Each tool as `tools/list` shows it (same order as `tools`), rendered at `build()`.
    pub(crate) listed: Vec<McpTool>,
    pub(crate) by_name: HashMap<String, usize>,
    /// The context function; without one every request gets an empty [`Context`].
    pub(crate) context: Option<ContextFn>,
    pub(crate) info: ServerConfig,
    pub(crate) on_outcome: Option<OutcomeFn>,
    /// Seals the `requestState` of approval questions and checks the ones brought back
    /// (H10).
    pub(crate) request_states: RequestStates,
    /// Whether an approval question offers the call's arguments for editing (B3).
    pub(crate) approval_edits: bool,
    /// The tools that run as tasks, and their tasks (M5).
    pub(crate) tasks: Arc<Tasks>,
    /// The resources, resource templates and prompts, and the subscriptions (M7).
    pub(crate) catalog: Catalog,
    /// The deferred tools and what searches loaded of them, when the server has some (Q1).
    pub(crate) deferred: Option<Deferred>,
}

impl Shared {
    /// The tool published as `name`, if `owner` may call it: a deferred tool is only for an
    /// owner a search of whose loaded it (Q1, A5); `None` names an owner the server cannot
    /// tell, for whom none is loaded.
    pub(crate) fn tool_for(&self, name: &str, owner: Option<&str>) -> Option<&Tool> {
        let at = *self.by_name.get(name)?;
        if let Some(deferred) = &self.deferred
            && deferred.is_deferred(at)
            && !owner.is_some_and(|owner| deferred.loaded_for(owner, at))
        {
            return None;
        }
        self.set.tools.get(at)
    }

    /// The context of a request, from the application's context function given `request()`;
    /// a panic in it is contained. Without a context function the request is not even made
    /// (over HTTP that spares a copy of its headers), and the context is empty.
    pub(crate) async fn context_for(
        &self,
        request: impl FnOnce() -> McpRequest,
    ) -> Result<Context, BoxError> {
        let Some(make) = &self.context else {
            return Ok(Context::new());
        };
        let make = Arc::clone(make);
        let request = request();
        match CatchUnwind::new(async move { make(request).await }).await {
            Ok(result) => result,
            Err(panic) => Err(format!("the context function panicked: {panic}").into()),
        }
    }
}
