//! A run's sub-agent runs (B1, B2), as its turns see them: what they used counts as the run's
//! own, and a call whose sub-agent run paused waits, holding that run, so that the run pauses
//! with it.

use super::Run;
use crate::agent::compose::nest::Nest;
use crate::agent::output::CallRecord;
use tool_core::Outcome;

/// The reason a call whose sub-agent run paused shows while it waits.
const SUB_AGENT_PAUSED: &str = "a call inside the sub-agent's run waits for a decision";

impl Run<'_> {
    /// After a batch of calls: what the sub-agent runs used joins the run's usage (and its
    /// parent's, when the run is itself a sub-agent's), and each call whose sub-agent run
    /// paused waits with that run (B2).
    pub(super) fn gather_nested(&mut self, nest: &Nest, records: &mut [CallRecord]) {
        let used = nest.take_used();
        self.state.nested.add(used);
        if let Some(parent) = self.env.parent {
            parent.report(used);
        }
        nest.clear_resumes();
        let mut paused = nest.take_paused();
        if paused.is_empty() {
            return;
        }
        for record in records.iter_mut() {
            let Some(run) = paused.remove(&*record.id) else {
                continue;
            };
            let arguments = serde_json::from_str(&record.arguments).unwrap_or_default();
            record.outcome = Outcome::awaiting_approval(SUB_AGENT_PAUSED, arguments);
            self.nested.insert(record.id.to_string(), run);
        }
    }
}
