//! [`Offer`]: what a run offers the model and runs its calls with, built once when its turns
//! begin (U2, A8).

use std::borrow::Cow;
use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::agent::shared::Shared;
use crate::model::ToolSpec;

/// The tools a run advertises, fixed for the whole run (A8), and the slots its calls take
/// (R2): one value that every turn, the final answer, a pause and a resumed turn read.
pub(super) struct Offer<'a> {
    /// What each request advertises: the agent's advertised tools, then the final-answer tool
    /// of a typed answer (O2).
    pub(super) specs: Cow<'a, [ToolSpec]>,
    /// The names of the agent's advertised tools, shared with the run's output and events.
    pub(super) names: Arc<[String]>,
    /// For each of the agent's tools, in declaration order, whether it is advertised: only
    /// those are callable in the run (A5).
    pub(super) visible: Vec<bool>,
    /// The run's concurrency slots (R2).
    pub(super) slots: Semaphore,
}

impl<'a> Offer<'a> {
    /// The offer of a run that advertises the tools `visible` marks, and `answer_tool` when
    /// it wants a typed answer through a tool. A run that shows every tool shares the agent's
    /// list and names instead of copying them.
    pub(super) fn new(
        shared: &'a Shared,
        visible: Vec<bool>,
        answer_tool: Option<ToolSpec>,
    ) -> Self {
        let every = !visible.contains(&false);
        let (specs, names) = if every && answer_tool.is_none() {
            (Cow::Borrowed(&shared.specs[..]), Arc::clone(&shared.names))
        } else {
            let mut specs: Vec<ToolSpec> = shared
                .specs
                .iter()
                .zip(&visible)
                .filter(|(_, shown)| **shown)
                .map(|(spec, _)| spec.clone())
                .collect();
            let names = specs.iter().map(|s| s.name().to_owned()).collect();
            // O2: the final-answer tool, offered beside the agent's tools.
            specs.extend(answer_tool);
            (Cow::Owned(specs), names)
        };
        Self {
            specs,
            names,
            visible,
            slots: Semaphore::new(shared.max_concurrency),
        }
    }
}
