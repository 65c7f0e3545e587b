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
        self.state.calls_made += records.len() as u64;
        let (mut results, pending) = self.sort_out(records);
        results.extend(extra);
        self.seal_pause(visible, results, pending)
    }

    /// Pauses a resumed run again (B2, B3): the paused turn's calls keep their place,
    /// `kept` the results the pause kept, `records` the calls decided now (some of them
    /// pending again: a sub-agent's run that paused again), `left` the calls left pending.
    /// They were counted when the run first paused.
    pub(super) fn pause_again(
        &mut self,
        visible: &[bool],
        kept: Vec<Answered>,
        records: Vec<CallRecord>,
        left: Vec<PendingCall>,
    ) -> RunError {
        let (mut results, mut pending) = self.sort_out(records);
        results.extend(kept);
        pending.extend(left);
        pending.sort_by_key(PendingCall::index);
        self.seal_pause(visible, results, pending)
    }

    /// The results of `records` and their pending calls; the records stay with the
    /// application (E3), never in the state.
    fn sort_out(&mut self, records: Vec<CallRecord>) -> (Vec<Answered>, Vec<PendingCall>) {
        let mut results = Vec::new();
        let mut pending = Vec::new();
        for record in records {
            let kind = match record.kind() {
                OutcomeKind::AwaitingApproval => Some(PendingKind::Approval),
                OutcomeKind::Deferred => Some(PendingKind::Deferred),
                _ => None,
            };
            let arguments = || {
                record
                    .outcome
                    .validated_arguments()
                    .cloned()
                    .unwrap_or_default()
            };
            let nested = self.nested.remove(&*record.id);
            match (kind, nested) {
                (Some(_), Some(nested)) => pending.push(PendingCall::nested(
                    record.index,
                    &record.id,
                    &record.name,
                    arguments(),
                    nested,
                )),
                (Some(kind), None) => pending.push(PendingCall::new(
                    record.index,
                    &record.id,
                    &record.name,
                    arguments(),
                    kind,
                    record.outcome.approval_reason(),
                )),
                (None, _) => results.push(Answered {
                    index: record.index,
                    result: result_of(&record),
                    counts: Counts::of(&record),
                    violations: record.violations().to_vec(),
                }),
            }
            self.calls.push(record);
        }
        (results, pending)
    }

    /// Seals the run's state with the paused turn's `results` and `pending` calls and the
    /// advertised tools into a [`PausedRun`].
    fn seal_pause(
        &mut self,
        visible: &[bool],
        mut results: Vec<Answered>,
        pending: Vec<PendingCall>,
    ) -> RunError {
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
