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
//! - `methods`: the `tasks/*` requests.
//! - `call`: a task-augmented `tools/call`, and the refusals of a call made the wrong way.
//! - `input`: a task's handler asking its user (M9: `input_required`, `tasks/update`).
//! - `later`: a call that becomes a task after its questions (M9).
//!
//! The 2025-11-25 messages rmcp's types do not carry are rewritten on their way in and out
//! by `compat::tasks`, the one seam that edits JSON-RPC bytes.

mod call;
mod input;
mod later;
mod methods;
mod store;

use std::collections::{HashMap, HashSet};

pub(crate) use call::{Flavor, Route, as_extension_task, extension_required, route, start};
pub(crate) use input::TaskQuestions;
pub(crate) use later::Later;
pub(crate) use methods::answer as answer_method;
pub(crate) use methods::{cancel, get, update};

/// Where a `tools/call`'s `task` travels inside the server (put there by the 2025-11-25
/// rewriting, `compat::tasks`, which rmcp's typed request drops).
pub(crate) const TASK_META_KEY: &str = "tool-runtime/task";
/// Where the handler puts the task a call became, for the 2025-11-25 rewriting to make it
/// the answer.
pub(crate) const CREATED_META_KEY: &str = "tool-runtime/task-created";
/// The prefix of the `tasks/*` methods inside the server.
pub(crate) const METHOD_PREFIX: &str = "tool-runtime/";

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
    /// The tools (by published name) whose calls become tasks after their questions (M9).
    later: HashSet<String>,
    store: store::Store,
}

impl Tasks {
    /// Tasks for the tools `support` names (by published name) that allow them, those named
    /// in `later` becoming tasks only after their questions.
    pub(crate) fn new(support: HashMap<String, TaskSupport>, later: HashSet<String>) -> Self {
        let support: HashMap<_, _> = support
            .into_iter()
            .filter(|(_, s)| *s != TaskSupport::Forbidden)
            .collect();
        let later = later
            .into_iter()
            .filter(|name| support.contains_key(name))
            .collect();
        Self {
            support,
            later,
            store: store::Store::default(),
        }
    }

    /// Whether any tool runs as a task: if none does, nothing about tasks is rewritten,
    /// declared or served.
    pub(crate) fn enabled(&self) -> bool {
        !self.support.is_empty()
    }

    /// Whether a call of the tool published as `name` becomes a task only when its handler
    /// says so, its questions asked before (M9, the Tasks extension).
    pub(crate) fn begins_later(&self, name: &str) -> bool {
        self.later.contains(name)
    }

    /// The task support of the tool published as `name`.
    pub(crate) fn support(&self, name: &str) -> TaskSupport {
        self.support.get(name).copied().unwrap_or_default()
    }
}
