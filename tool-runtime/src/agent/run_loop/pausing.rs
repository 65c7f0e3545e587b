//! Pausing a run (H2, H5, H7): the turn's results and pending calls sealed with the run's
//! state into a [`PausedRun`].

use tool_core::OutcomeKind;

use super::Run;
use super::control::result_of;
use crate::agent::batch::CallsEnd;
use crate::agent::error::RunError;
use crate::agent::output::CallRecord;
use crate::agent::pause::{
    AdvertisedTool, Answered, Content, PausedRun, PendingCall, PendingKind, fingerprint,
};
use crate::agent::state::{Counts, new_id};

impl Run<'_> {
    /// Whether a turn whose calls ended with `records` and `end` pauses (H2): they all ended,
    /// and some wait. Only an agent holding a tool that can pause looks.
    pub(super) fn pauses_after(&self, records: &[CallRecord], end: CallsEnd) -> bool {
        self.env.shared.pauses
            && end == CallsEnd::Done
            && records.iter().any(|record| record.outcome.is_pending())
    }

    /// Pauses the run (H2, H5, H7): the results of the calls that ran and the pending calls
    /// go into a sealed [`PausedRun`] with the run's state and the advertised tools; the
    /// records of every call stay with the application (E3), never in the state. `extra` is
    /// a result the turn gave besides its calls' (the final answer's violations, O2).
    pub(super) fn pause(
        &mut self,
        visible: &[bool],
        records: Vec<CallRecord>,
        extra: Option<Answered>,
    ) -> RunError {
        let mut results: Vec<Answered> = extra.into_iter().collect();
        let mut pending = Vec::new();
        self.state.calls_made += records.len() as u64;
        for record in records {
            let kind = match record.kind() {
                OutcomeKind::AwaitingApproval => Some(PendingKind::Approval),
                OutcomeKind::Deferred => Some(PendingKind::Deferred),
                _ => None,
            };
            match kind {
                Some(kind) => pending.push(PendingCall::new(
                    record.index,
                    &record.id,
                    &record.name,
                    record
                        .outcome
                        .validated_arguments()
                        .cloned()
                        .unwrap_or_default(),
                    kind,
                    record.outcome.approval_reason(),
                )),
                None => results.push(Answered {
                    index: record.index,
                    result: result_of(&record),
                    counts: Counts::of(&record),
                    violations: record.violations().to_vec(),
                }),
            }
            self.calls.push(record);
        }
        results.sort_by_key(|answered| answered.index);
        let tools = self
            .env
            .shared
            .set
            .tools
            .iter()
            .zip(visible)
            .filter(|(_, shown)| **shown)
            .map(|(tool, _)| AdvertisedTool {
                name: tool.name().to_owned(),
                fingerprint: fingerprint(tool),
            })
            .collect();
        tracing::info!(
            pending = pending.len(),
            "the run paused: calls await a decision or a result"
        );
        // K4: the resumed run links to the span of the run's first part.
        if self.state.trace.is_none() {
            self.state.trace =
                crate::telemetry::of_span(&tracing::Span::current()).map(|cx| cx.traceparent);
        }
        let content = Content {
            pause_id: new_id("pause"),
            tools,
            state: std::mem::take(&mut self.state),
            results,
            pending,
        };
        let paused = PausedRun::seal(content, self.env.shared.set.state_key.as_deref());
        RunError::pause(paused, std::mem::take(&mut self.calls))
    }
}
