//! [`Shared`]: what every run of an agent shares, built once by `AgentBuilder::build` and read
//! by the run loop and the calls of each turn.

use std::sync::Arc;
use std::time::Duration;

use super::catalog::Catalog;
use super::options::RunOptions;
use super::output::CallRecord;
use super::pause::PauseLedger;
use super::toolset::ToolSet;
use crate::model::{Model, ToolSpec};

/// What every run of an agent shares.
pub(crate) struct Shared {
    pub(crate) model: Box<dyn Model>,
    /// The agent's name, for telemetry (K2).
    pub(crate) name: Option<String>,
    pub(crate) instructions: Option<String>,
    /// The tools, their names, hooks, limits and state key, checked at `build()` (U4).
    pub(crate) set: ToolSet,
    /// Each tool's spec, rendered once at `build()` (same order as `tools`).
    pub(crate) specs: Vec<ToolSpec>,
    /// Every tool's name, in declaration order: what a run that shows every tool advertises,
    /// shared with its output and events rather than copied per run (A2).
    pub(crate) names: Arc<[String]>,
    /// The positions of the tools that have an availability policy, in declaration order:
    /// the only ones discovery has to ask (A1, A2).
    pub(crate) with_policy: Vec<usize>,
    /// Each tool's call timeout (same order as `tools`).
    pub(crate) timeouts: Vec<Option<Duration>>,
    pub(crate) max_concurrency: usize,
    pub(crate) max_turns: usize,
    /// Whether some tool can pause a run (H1, H5): only then does a turn look for pending
    /// calls.
    pub(crate) pauses: bool,
    /// Where resumed pauses are consumed (H9), if anywhere.
    pub(crate) ledger: Option<Arc<dyn PauseLedger>>,
    /// Who answers the handlers' questions when the run's context names nobody (M3).
    pub(crate) elicitor: Option<Arc<dyn tool_core::Elicitor>>,
    /// Who answers the handlers' sampling requests and roots requests (M8).
    pub(crate) answerers: super::sampling::Answerers,
    /// Each tool's retry budget (L1), same order as `tools`.
    pub(crate) budgets: Vec<u32>,
    /// The retry budget of what has none of its own: a typed answer (L1, O2).
    pub(crate) default_retries: u32,
    /// The options of a run started without its own (L2, L3, L5).
    pub(crate) options: RunOptions,
    /// What sees every call's outcome, refused calls included (K1).
    pub(crate) on_outcome: Option<OutcomeFn>,
    /// The sub-agents held as tools (B1), by tool name.
    pub(crate) sub_agents: Vec<(String, super::Agent)>,
    /// The repair of malformed arguments (Q4), when the agent asked for one.
    pub(crate) repair: Option<Arc<dyn super::repair::RepairArguments>>,
    /// The deferred tools and their search (Q1), when some tool is deferred.
    pub(crate) catalog: Option<Catalog>,
}

/// An observer of every call's outcome ([`AgentBuilder::on_outcome`](super::AgentBuilder::on_outcome)).
pub(crate) type OutcomeFn = Arc<dyn Fn(&CallRecord) + Send + Sync>;

impl Shared {
    /// Whether some tool is a sub-agent (B1): only then does a run share a nest with its
    /// calls.
    pub(crate) fn composes(&self) -> bool {
        !self.sub_agents.is_empty()
    }

    /// The sub-agent held as tool `name`, if it is one.
    pub(crate) fn sub_agent(&self, name: &str) -> Option<&super::Agent> {
        self.sub_agents
            .iter()
            .find(|(held, _)| held == name)
            .map(|(_, agent)| agent)
    }

    /// Shows each of `records` to the observer, if there is one.
    pub(crate) fn observe(&self, records: &[CallRecord]) {
        if let Some(observe) = &self.on_outcome {
            records.iter().for_each(|record| observe(record));
        }
    }
}
