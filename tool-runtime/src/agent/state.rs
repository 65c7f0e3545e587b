//! [`RunState`]: everything that governs a run and outlives a pause (H7). The live loop keeps
//! it, and a paused run holds it sealed, so that a resumed run goes on with the same options
//! and counters as if it had never paused. What a run borrows or derives (the agent, the
//! caller's context, the event sink, the advertised specs) stays beside it, never in it.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tool_core::{OutcomeKind, ToolError, Violation};

use super::options::{NestedUsage, RunOptions};
use super::output::CallRecord;
use crate::model::{Message, Usage};

/// The name of the final-answer tool, and of the answer's format (O2).
pub(crate) const ANSWER_NAME: &str = "final_answer";

/// The state of one run, from its start to its end, across its pauses (H7).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunState {
    /// The run's id, the same across its pauses (H9).
    pub(crate) run_id: String,
    /// The options the run follows: its own, or the agent's when it started (L2, L3, L5).
    pub(crate) options: RunOptions,
    /// How many model requests the run may make (R3), as when it started.
    pub(crate) max_turns: usize,
    /// Whether the forced tool choice was spent on the run's first request (L3).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) choice_spent: bool,
    /// The conversation so far.
    pub(crate) transcript: Vec<Message>,
    /// Token usage of each request, from turn 1: its length is the number of requests made.
    pub(crate) usage: Vec<Usage>,
    /// The tool calls the run made (L2), pending ones included.
    pub(crate) calls_made: u64,
    /// Each tool's failed calls in a row (L1), by name; a tool without failures is absent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) failures: BTreeMap<String, u32>,
    /// The typed answer the run wants (O2), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) answer: Option<AnswerState>,
    /// The W3C `traceparent` of the span of the run's first part, kept when it paused so that
    /// a resumed run links to it (K4); `None` when that span was not exported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) trace: Option<String>,
    /// The tools a decision allowed for the rest of the run (B3): their calls run without
    /// asking for approval.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub(crate) allowed: BTreeSet<String>,
    /// What the run's sub-agents used (B1): it counts toward the run's limits (L2).
    #[serde(default, skip_serializing_if = "NestedUsage::is_zero")]
    pub(crate) nested: NestedUsage,
    /// The deferred tools a search in this run returned (Q1): advertised from then on, and
    /// still after a pause (H7).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub(crate) loaded: BTreeSet<String>,
}

impl RunState {
    /// What this run used: its own requests, tokens and calls and its sub-agents' (B1).
    pub(crate) fn used(&self) -> NestedUsage {
        let mut used = NestedUsage {
            requests: self.usage.len() as u64,
            usage: self.usage.iter().fold(Usage::default(), |sum, u| {
                Usage::new(
                    sum.input_tokens.saturating_add(u.input_tokens),
                    sum.output_tokens.saturating_add(u.output_tokens),
                )
            }),
            calls: self.calls_made,
        };
        used.add(self.nested);
        used
    }

    /// A new run of `transcript`, under `options`.
    pub(crate) fn new(
        options: RunOptions,
        max_turns: usize,
        transcript: Vec<Message>,
        answer: Option<AnswerState>,
    ) -> Self {
        Self {
            run_id: new_id("run"),
            options,
            max_turns,
            choice_spent: false,
            transcript,
            usage: Vec::new(),
            calls_made: 0,
            failures: BTreeMap::new(),
            answer,
            trace: None,
            allowed: BTreeSet::new(),
            nested: NestedUsage::default(),
            loaded: BTreeSet::new(),
        }
    }

    /// The turn of the next request, from 1.
    pub(crate) fn next_turn(&self) -> usize {
        self.usage.len() + 1
    }
}

/// The typed answer a run wants (O2), as its state keeps it: the answer type's code is the
/// application's, so a resume names the type again and it must have the same schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AnswerState {
    /// The fingerprint of the answer's schema.
    pub(crate) schema: String,
    /// Whether the model takes the answer natively (else through the final-answer tool).
    pub(crate) native: bool,
    /// The answer's retry budget (L1).
    pub(crate) budget: u32,
    /// The answers that did not fit, in a row.
    pub(crate) failures: u32,
}

/// How a call's outcome counts for run control: toward its tool's retry budget (L1), as a
/// success that resets it (and may stop the run, L5), or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Counts {
    /// The call succeeded.
    Success,
    /// Invalid arguments, or a handler asking the model to retry (L1).
    Retry,
    /// Any other outcome.
    Neither,
}

impl Counts {
    /// How `record` counts.
    pub(crate) fn of(record: &CallRecord) -> Self {
        match record.kind() {
            OutcomeKind::Success => Counts::Success,
            OutcomeKind::InvalidArguments => Counts::Retry,
            OutcomeKind::Rejected
                if record
                    .error()
                    .and_then(|error| error.tool_error())
                    .is_some_and(ToolError::asks_retry) =>
            {
                Counts::Retry
            }
            _ => Counts::Neither,
        }
    }
}

/// A call's end as run control reads it (L1, L5): a view of a [`CallRecord`], or of a result
/// a paused run kept.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallEnd<'a> {
    pub(crate) name: &'a str,
    pub(crate) id: &'a str,
    pub(crate) counts: Counts,
    pub(crate) violations: &'a [Violation],
    /// The model-facing text: the run's output when the call stops the run (L5).
    pub(crate) text: &'a str,
}

impl<'a> CallEnd<'a> {
    /// `record`'s end.
    pub(crate) fn of(record: &'a CallRecord) -> Self {
        Self {
            name: &record.name,
            id: &record.id,
            counts: Counts::of(record),
            violations: record.violations(),
            text: record.text(),
        }
    }
}

/// A new id with `prefix`: 128 random bits in hex (H9).
pub(crate) fn new_id(prefix: &str) -> String {
    let mut bytes = [0_u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No system randomness: a digest of the time, the process and a counter is still
        // unique to this process's ids.
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let digest = Sha256::new()
            .chain_update(now.to_le_bytes())
            .chain_update(std::process::id().to_le_bytes())
            .chain_update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes())
            .finalize();
        bytes.copy_from_slice(&digest[..16]);
    }
    format!("{prefix}_{}", base16ct::lower::encode_string(&bytes))
}
