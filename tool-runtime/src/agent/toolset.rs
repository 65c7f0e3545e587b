//! [`ToolSet`]: the tools an agent or an MCP server holds, with what governs their calls
//! (hooks, limits, the state key), checked in one place (U4): every tool's declaration, names
//! given twice (N3), an empty state key. `AgentBuilder` and `McpServerBuilder` each gather a
//! [`ToolSetBuilder`] and add the checks of their own transport.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use tool_core::hook::{Hook, Transport};
use tool_core::{CallName, Hooks, IntoTool, Limits, Tool, index_by_name};

use super::error::BuildProblem;

/// The length of a state key below which building warns: a key of 32 random bytes is what
/// HMAC-SHA256 wants (H3, H10).
const RECOMMENDED_KEY_LEN: usize = 32;

/// The tools' indices by their declared names, hashed with FxHash: the keys are the
/// developer's own tool names, fixed when the set is built; a name a model or a client sends
/// is only looked up (never inserted), so a keyed hash (std's SipHash) buys nothing against
/// flooding here. The keys are shared strings: a model's call of a known tool holds its key
/// (see [`ToolSet::name`]) rather than a string of its own.
pub(crate) type ByName = HashMap<CallName, usize, rustc_hash::FxBuildHasher>;

/// What a builder gathers before the set is checked.
pub(crate) struct ToolSetBuilder {
    tools: Vec<Tool>,
    hooks: Hooks,
    limits: Limits,
    state_key: Option<Arc<[u8]>>,
    record_tool_content: bool,
}

/// A checked set of tools and what governs their calls, shared by every run or session.
pub(crate) struct ToolSet {
    /// The tools, in declaration order.
    pub(crate) tools: Vec<Tool>,
    /// Each tool's index in `tools`, by its declared name.
    pub(crate) by_name: ByName,
    /// The hooks around every call that reaches the handler (K1).
    pub(crate) hooks: Hooks,
    /// The bounds of every call's arguments (S5).
    pub(crate) limits: Limits,
    /// The key that seals what the transport hands out and takes back: paused runs (H3),
    /// request states (H10); without one, SHA-256 alone.
    pub(crate) state_key: Option<Arc<[u8]>>,
    /// Whether each call's span records its arguments and result (K2, opt-in).
    pub(crate) record_tool_content: bool,
}

impl ToolSetBuilder {
    /// An empty set whose hooks run on `transport`.
    pub(crate) fn new(transport: Transport) -> Self {
        Self {
            tools: Vec::new(),
            hooks: Hooks::new(transport),
            limits: Limits::default(),
            state_key: None,
            record_tool_content: false,
        }
    }

    /// Adds a tool.
    pub(crate) fn tool(&mut self, tool: impl IntoTool) {
        self.tools.push(tool.into_tool());
    }

    /// Adds tools.
    pub(crate) fn tools<T: IntoTool>(&mut self, tools: impl IntoIterator<Item = T>) {
        self.tools
            .extend(tools.into_iter().map(IntoTool::into_tool));
    }

    /// Whether some tool is offered only once a search returned it (Q1).
    pub(crate) fn has_deferred_loading(&self) -> bool {
        self.tools.iter().any(Tool::is_deferred_loading)
    }

    /// Adds a hook, after the ones added before.
    pub(crate) fn hook(&mut self, hook: impl Hook) {
        self.hooks.push(hook);
    }

    /// Sets the bounds of every call's arguments.
    pub(crate) fn limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Sets the state key.
    pub(crate) fn state_key(&mut self, key: Vec<u8>) {
        self.state_key = Some(Arc::from(key));
    }

    /// Whether spans record the calls' arguments and results.
    pub(crate) fn record_tool_content(&mut self, record: bool) {
        self.record_tool_content = record;
    }

    /// Checks the set: each tool's declaration and its name's uniqueness (N3), and the state
    /// key, adding what is wrong to `problems`. Returns the set and, for each tool, whether it
    /// passed (a transport renders only those).
    pub(crate) fn check(self, problems: &mut Vec<BuildProblem>) -> (ToolSet, Vec<bool>) {
        let index = index_by_name(
            self.tools
                .iter()
                .map(|t| (t.name(), t.site(), t.declaration_error())),
        );
        let mut sound = Vec::with_capacity(self.tools.len());
        for problem in index.problems {
            sound.push(problem.is_none());
            problems.extend(problem.map(BuildProblem::Tool));
        }
        match self.state_key.as_deref() {
            Some([]) => problems.push(BuildProblem::EmptyStateKey),
            Some(key) if key.len() < RECOMMENDED_KEY_LEN => tracing::warn!(
                length = key.len(),
                "the state key is shorter than the {RECOMMENDED_KEY_LEN} random bytes \
                 recommended"
            ),
            _ => {}
        }
        let set = ToolSet {
            tools: self.tools,
            by_name: (index.by_name.into_iter())
                .map(|(name, i)| (CallName::from(name), i))
                .collect(),
            hooks: self.hooks,
            limits: self.limits,
            state_key: self.state_key,
            record_tool_content: self.record_tool_content,
        };
        (set, sound)
    }
}

impl ToolSet {
    /// The name a model called, shared with the set's own key when it names one of the set's
    /// tools (no allocation: a call of a known tool holds the key), else a string of its own.
    pub(crate) fn name(&self, called: String) -> CallName {
        match self.by_name.get_key_value(called.as_str()) {
            Some((known, _)) => known.clone(),
            None => CallName::from(called),
        }
    }
}

impl fmt::Debug for ToolSetBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.tools)
            .field("hooks", &self.hooks)
            .field("state_key", &self.state_key.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}
