//! [`Shared`]: what every run of an agent shares, built once by `AgentBuilder::build` and read
//! by the run loop and the calls of each turn.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tool_core::{Hooks, Limits, Tool};

use super::options::RunOptions;
use super::output::CallRecord;
use super::pause::PauseLedger;
use crate::model::{Model, ToolSpec};

/// What every run of an agent shares.
pub(crate) struct Shared {
    pub(crate) model: Box<dyn Model>,
    /// The agent's name, for telemetry (K2).
    pub(crate) name: Option<String>,
    /// Whether each call's span records its arguments and result (K2, opt-in).
    pub(crate) record_tool_content: bool,
    pub(crate) instructions: Option<String>,
    /// The tools, in declaration order.
    pub(crate) tools: Vec<Tool>,
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
    /// Each tool's index in `tools`, by its name.
    pub(crate) by_name: ByName,
    pub(crate) max_concurrency: usize,
    pub(crate) max_turns: usize,
    pub(crate) limits: Limits,
    /// Whether some tool can pause a run (H1, H5): only then does a turn look for pending
    /// calls.
    pub(crate) pauses: bool,
    /// The key that seals paused runs with HMAC-SHA256 (H3); without one, SHA-256.
    pub(crate) state_key: Option<Arc<[u8]>>,
    /// Where resumed pauses are consumed (H9), if anywhere.
    pub(crate) ledger: Option<Arc<dyn PauseLedger>>,
    /// Who answers the handlers' questions when the run's context names nobody (M3).
    pub(crate) elicitor: Option<Arc<dyn tool_core::Elicitor>>,
    /// Each tool's retry budget (L1), same order as `tools`.
    pub(crate) budgets: Vec<u32>,
    /// The retry budget of what has none of its own: a typed answer (L1, O2).
    pub(crate) default_retries: u32,
    /// The options of a run started without its own (L2, L3, L5).
    pub(crate) options: RunOptions,
    /// The hooks around every call that reaches the handler's pipeline (K1).
    pub(crate) hooks: Hooks,
    /// What sees every call's outcome, refused calls included (K1).
    pub(crate) on_outcome: Option<OutcomeFn>,
}

/// The tools' indices by name, hashed with FxHash: the keys are the developer's own tool
/// names, fixed when the agent is built; a name the model sends is only looked up (never
/// inserted), so a keyed hash (std's SipHash) buys nothing against flooding here.
pub(crate) type ByName = HashMap<String, usize, rustc_hash::FxBuildHasher>;

/// An observer of every call's outcome ([`AgentBuilder::on_outcome`](super::AgentBuilder::on_outcome)).
pub(crate) type OutcomeFn = Arc<dyn Fn(&CallRecord) + Send + Sync>;

impl Shared {
    /// Shows each of `records` to the observer, if there is one.
    pub(crate) fn observe(&self, records: &[CallRecord]) {
        if let Some(observe) = &self.on_outcome {
            records.iter().for_each(|record| observe(record));
        }
    }
}
