//! Long-running tools as MCP tasks, as protocol 2025-11-25 defines them (M5).
//!
//! A tool declared with [`McpServerBuilder::task_support`](super::McpServerBuilder::task_support)
//! shows `execution.taskSupport` in `tools/list`, and the server declares `tasks` at
//! initialize. A `tools/call` that carries `task` then answers at once with the task; the call
//! runs on, through the same pipeline as any call (availability, validation, approval, hooks,
//! redaction), and the client polls `tasks/get`, waits on `tasks/result`, lists its tasks
//! (`tasks/list`) and cancels one (`tasks/cancel`, which cancels the call's context).
//!
//! - `store`: the tasks, who may see each (the session that made it; without sessions, the
//!   holder of the same `Authorization`), how long each is kept.
//! - `wire`: the messages the SDK does not read, rewritten on the way in and out.
//! - `methods`: the `tasks/*` requests.
//! - `call`: a task-augmented `tools/call`, and the refusals of a call made the wrong way.
//! - `io`: the rewriting for a byte-stream transport (stdio); `http`, for streamable HTTP.

mod call;
pub(crate) mod http;
pub(crate) mod io;
mod methods;
mod store;
mod wire;

use std::collections::HashMap;

pub(crate) use call::{Flavor, Route, as_extension_task, route, start};
pub(crate) use methods::answer as answer_method;
pub(crate) use methods::{cancel, get};
pub(crate) use wire::TASK_META_KEY;

/// Whether a tool's calls run as tasks, as its `tools/list` entry says in
/// `execution.taskSupport` (M5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Calls are never tasks (a task-augmented call is refused `-32601`): every tool's
    /// default.
    #[default]
    Forbidden,
    /// A call may be a task or a plain call, as the client chooses.
    Optional,
    /// Every call must be a task: a plain call is refused `-32601`.
    Required,
}

impl TaskSupport {
    /// The name the protocol gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forbidden => "forbidden",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

/// A server's task supports (by published name) and its tasks.
#[derive(Default)]
pub(crate) struct Tasks {
    support: HashMap<String, TaskSupport>,
    store: store::Store,
}

impl Tasks {
    /// Tasks for the tools `support` names (by published name) that allow them.
    pub(crate) fn new(support: HashMap<String, TaskSupport>) -> Self {
        let support = support
            .into_iter()
            .filter(|(_, s)| *s != TaskSupport::Forbidden)
            .collect();
        Self {
            support,
            store: store::Store::default(),
        }
    }

    /// Whether any tool runs as a task: if none does, nothing about tasks is rewritten,
    /// declared or served.
    pub(crate) fn enabled(&self) -> bool {
        !self.support.is_empty()
    }

    /// The task support of the tool published as `name`.
    pub(crate) fn support(&self, name: &str) -> TaskSupport {
        self.support.get(name).copied().unwrap_or_default()
    }

    /// A message from the client, rewritten for the SDK (`None`: unchanged).
    pub(crate) fn incoming(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        self.enabled().then(|| wire::incoming(bytes)).flatten()
    }

    /// A message to the client, rewritten for 2025-11-25 tasks (`None`: unchanged).
    pub(crate) fn outgoing(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        if !self.enabled() {
            return None;
        }
        wire::outgoing(bytes, &|name| self.support(name))
    }
}
