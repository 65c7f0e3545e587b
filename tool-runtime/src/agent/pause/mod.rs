//! A paused run (H2–H5): the plain data a run leaves when calls wait for approval or for
//! their results, how it is sealed and checked, and the decisions that resume it.
//!
//! - `seal`: the digest (or HMAC) over a paused run's content, and tools' fingerprints.
//! - `canonical`: the canonical JSON (RFC 8785) the seal covers (H8).
//! - `decision`: [`Decision`] and [`Decisions`], one per pending call.
//! - `ledger`: [`PauseLedger`], which consumes each pause once (H9), and [`MemoryLedger`].
//! - `resume_options`: [`ResumeOptions`], what a resume may add (a ledger, tighter limits).
//! - `error`: [`ResumeError`], why a paused run is refused.

mod canonical;
mod decision;
mod error;
mod ledger;
mod resume_options;
mod seal;

use std::collections::HashMap;
use std::hash::BuildHasher;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_core::{CallName, Tool};

use super::state::{ANSWER_NAME, Counts, RunState};
use crate::model::{Message, ToolCall, ToolResult, Usage, check_transcript};
use seal::Seal;

pub use decision::{Decision, Decisions};
pub use error::ResumeError;
pub use ledger::{BoxFuture, MemoryLedger, PauseLedger};
pub use resume_options::ResumeOptions;
pub(crate) use seal::{fingerprint, value_fingerprint};

/// The format a paused run names, so that a reader knows what it holds.
pub(crate) const FORMAT: &str = "tool-runtime/paused-run";
/// The version of the format this build writes and reads: 2 holds the run's whole state
/// (H7) and its ids (H9).
pub(crate) const VERSION: u32 = 2;

/// A run that paused because some calls wait for approval (H1, H2) or for their results
/// (H5): plain data, with no closure, no [`tool_core::Context`] and no unredacted error (H3).
///
/// It holds the run's whole state (H7): the transcript up to the turn that paused, the usage
/// so far, the options the run follows (usage limits, stopping tools, its tool choice and
/// whether it was spent), its counters (calls made, each tool's failures in a row) and the
/// typed answer it wants; then the results of the paused turn's calls that ran, the pending
/// calls and the tools advertised (each name with a fingerprint of its schema); the run's id,
/// the same across its pauses, and this pause's own id (H9). It is sealed with a digest. Serialize it (serde, JSON: [`PausedRun::to_json`])
/// to keep it while someone decides, then give it with [`Decisions`] to
/// [`crate::Agent::resume`] in any process whose agent holds the same tools. A paused run
/// whose tools changed, or whose content was altered, is refused with a [`ResumeError`].
///
/// The seal is SHA-256 over the content by default: it detects accidental and unkeyed edits,
/// but anyone who can write the file can recompute it. Give the agent a key
/// ([`crate::AgentBuilder::state_key`]) to seal with HMAC-SHA256 instead: then only holders of
/// the key can make a paused run that resumes. Either way the content is not encrypted: it
/// holds what the model saw and the pending calls' arguments.
///
/// What a reader of a file sees ([`PausedRun::pending`], …) is checked only when the run is
/// resumed; check it first with [`crate::Agent::verify`] before showing it to an approver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PausedRun {
    format: String,
    version: u32,
    run: Content,
    seal: Seal,
}

/// What a paused run holds, sealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Content {
    /// This pause's id, unique (H9).
    pub(crate) pause_id: String,
    /// The tools advertised in the run (A8), in declaration order.
    pub(crate) tools: Vec<AdvertisedTool>,
    /// The run's state (H7): its transcript ends with the assistant message whose calls
    /// paused, its usage covers every turn up to the one that paused.
    pub(crate) state: RunState,
    /// The results of that message's calls that ran (model-facing text only).
    pub(crate) results: Vec<Answered>,
    /// That message's calls that wait.
    pub(crate) pending: Vec<PendingCall>,
}

/// Gathers the pending calls of `paused` and of its sub-agent runs under `path`.
fn collect_pending<'a>(
    paused: &'a PausedRun,
    path: &mut Vec<&'a str>,
    found: &mut Vec<PendingAt<'a>>,
) {
    for call in &paused.run.pending {
        path.push(&call.id);
        match call.nested_run() {
            Some(nested) => collect_pending(nested, path, found),
            None => found.push(PendingAt {
                path: path.clone(),
                call,
            }),
        }
        path.pop();
    }
}

/// A tool advertised in a paused run: its name and fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AdvertisedTool {
    pub(crate) name: String,
    pub(crate) fingerprint: String,
}

/// The result of a call of the paused turn that ran, at its position in the turn, with how
/// it counts for run control once the turn is whole (L1, L5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Answered {
    pub(crate) index: usize,
    pub(crate) result: ToolResult,
    pub(crate) counts: Counts,
    /// The violations of invalid arguments (model-facing, S3), kept for the failure that
    /// ends the run if the tool's retry budget runs out (L1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) violations: Vec<tool_core::Violation>,
}

/// What a pending call waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PendingKind {
    /// Approval (H1): approve or deny it.
    Approval,
    /// Its result, from elsewhere: the tool is deferred (H5). Give its result, or deny it.
    Deferred,
    /// A decision inside the sub-agent run it started, which paused (B2): give that run's
    /// decisions ([`Decisions::nested`]), or deny the call as a whole.
    Nested,
}

/// A call that waits (H2, H5): it passed the availability re-check and validation, and
/// nothing of it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCall {
    index: usize,
    id: String,
    tool: String,
    arguments: Value,
    kind: PendingKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// The paused run of the sub-agent this call started (B2), sealed within this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nested: Option<Box<PausedRun>>,
}

/// A pending call at any depth of a run whose sub-agents paused (B2): the path of call ids
/// that leads to it (the calls that started each sub-agent run, then its own id) and the
/// call.
#[derive(Debug, Clone)]
pub struct PendingAt<'a> {
    path: Vec<&'a str>,
    call: &'a PendingCall,
}

impl<'a> PendingAt<'a> {
    /// The ids from the top-level run's call down to the pending call's own: decide it with
    /// [`Decisions::decide_at`].
    pub fn path(&self) -> &[&'a str] {
        &self.path
    }

    /// The pending call.
    pub fn call(&self) -> &'a PendingCall {
        self.call
    }
}

impl PendingCall {
    pub(crate) fn new(
        index: usize,
        id: &str,
        tool: &str,
        arguments: Value,
        kind: PendingKind,
        reason: Option<&str>,
    ) -> Self {
        Self {
            index,
            id: id.to_owned(),
            tool: tool.to_owned(),
            arguments,
            kind,
            reason: reason.map(str::to_owned),
            nested: None,
        }
    }

    /// A call of a sub-agent tool whose run paused as `nested` (B2).
    pub(crate) fn nested(
        index: usize,
        id: &str,
        tool: &str,
        arguments: Value,
        nested: PausedRun,
    ) -> Self {
        Self {
            index,
            id: id.to_owned(),
            tool: tool.to_owned(),
            arguments,
            kind: PendingKind::Nested,
            reason: None,
            nested: Some(Box::new(nested)),
        }
    }

    /// The paused run of the sub-agent this call started (B2), for a call of kind
    /// [`PendingKind::Nested`].
    pub fn nested_run(&self) -> Option<&PausedRun> {
        self.nested.as_deref()
    }

    /// Whether the call is of `tool`'s kind: deferred for a deferred tool, and holding a
    /// sub-agent's run when it waits for one (B2).
    fn fits(&self, tool: &Tool) -> bool {
        (self.kind == PendingKind::Deferred) == tool.is_deferred()
            && (self.kind == PendingKind::Nested) == self.nested.is_some()
    }

    /// The paused sub-agent run, owned.
    pub(crate) fn take_nested(&mut self) -> Option<PausedRun> {
        self.nested.take().map(|run| *run)
    }

    /// The call id the model gave: decide the call by it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The arguments as validated (S2: defaults filled in), rendered as JSON: what the
    /// handler receives if the call is approved. The model's own text is the call's in
    /// [`PausedRun::transcript`]; at resume that text is validated again and runs.
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// What the call waits for.
    pub fn kind(&self) -> PendingKind {
        self.kind
    }

    /// Why the call needs approval, as the predicate said (H2); `None` for a deferred call.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The call's position in its turn, from 0 (the model's order).
    pub fn index(&self) -> usize {
        self.index
    }
}

impl PausedRun {
    /// Seals `content`, with `key` when there is one. The lists are shrunk to their length
    /// first: a paused run may be kept in memory for long (while someone decides), and the
    /// run's growing lists held twice their content (a third of a small paused run's heap).
    pub(crate) fn seal(mut content: Content, key: Option<&[u8]>) -> Self {
        content.state.usage.shrink_to_fit();
        content.state.transcript.shrink_to_fit();
        content.results.shrink_to_fit();
        content.pending.shrink_to_fit();
        let mut paused = Self {
            format: FORMAT.to_owned(),
            version: VERSION,
            run: content,
            seal: Seal::new(&[], None),
        };
        paused.seal = Seal::new(&paused.sealed_bytes(), key);
        paused
    }

    /// The bytes the seal covers: the JSON array `[format, version, content]` in its
    /// canonical form (RFC 8785, H8), so that a JSON-equivalent rewrite of a file (key order,
    /// whitespace, escapes, number spelling) still matches, whichever map serde_json was
    /// built with.
    fn sealed_bytes(&self) -> Vec<u8> {
        // Serializing these types cannot fail: every map key is a string.
        serde_json::to_value((&self.format, self.version, &self.run))
            .map(|value| canonical::to_vec(&value))
            .unwrap_or_default()
    }

    /// Reads a paused run from JSON text.
    ///
    /// # Errors
    ///
    /// [`ResumeError::Malformed`] when the text is not a paused run. Whether it is intact is
    /// checked at resume ([`crate::Agent::verify`]).
    pub fn from_json(text: &str) -> Result<Self, ResumeError> {
        serde_json::from_str(text).map_err(|e| ResumeError::Malformed {
            reason: e.to_string(),
        })
    }

    /// The paused run as JSON text.
    ///
    /// # Errors
    ///
    /// None in practice (every map key is a string); serde's error otherwise.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// The calls that wait for a decision or a result, in the model's order.
    pub fn pending(&self) -> &[PendingCall] {
        &self.run.pending
    }

    /// Every call that waits, at any depth (B2): each of this run's pending calls, and in
    /// place of a call whose sub-agent run paused, that run's pending calls, each with the
    /// path of call ids that leads to it.
    pub fn pending_paths(&self) -> Vec<PendingAt<'_>> {
        let mut found = Vec::new();
        collect_pending(self, &mut Vec::new(), &mut found);
        found
    }

    /// The run's id: the same in every pause of one run (H9), and in its spans
    /// (`gen_ai.conversation.id`).
    pub fn run_id(&self) -> &str {
        &self.run.state.run_id
    }

    /// This pause's id, unique (H9): a [`PauseLedger`] given to the resume consumes it, so
    /// that the same paused run cannot be resumed twice.
    pub fn pause_id(&self) -> &str {
        &self.run.pause_id
    }

    /// The options the run follows (H7): a resume goes on with them.
    pub fn options(&self) -> &super::RunOptions {
        &self.run.state.options
    }

    /// The tool calls the run made so far, the pending ones included (L2).
    pub fn calls_made(&self) -> u64 {
        self.run.state.calls_made
    }

    /// Whether the run wants a typed final answer (O2): then resume it with
    /// a [`crate::RunRequest`] typed with the same answer type.
    pub fn wants_typed_answer(&self) -> bool {
        self.run.state.answer.is_some()
    }

    /// The conversation up to the turn that paused: it ends with the assistant message whose
    /// calls are pending (their results, and those of its other calls, are added at resume).
    pub fn transcript(&self) -> &[Message] {
        &self.run.state.transcript
    }

    /// The conversation, owned.
    pub(crate) fn into_transcript(self) -> Vec<Message> {
        self.run.state.transcript
    }

    /// Token usage of each turn so far, from turn 1.
    pub fn usage(&self) -> &[Usage] {
        &self.run.state.usage
    }

    /// The turn that paused, from 1 (the number of model requests so far).
    pub fn turns(&self) -> usize {
        self.run.state.usage.len()
    }

    /// The names of the tools advertised in the run, in declaration order.
    pub fn advertised(&self) -> impl Iterator<Item = &str> {
        self.run.tools.iter().map(|t| t.name.as_str())
    }

    /// Checks the paused run against an agent's tools and key: its format, its seal, its
    /// tools (each held, with the same fingerprint) and that its parts fit together.
    /// Returns, for each tool the agent holds, whether the run advertised it.
    pub(crate) fn verify<S: BuildHasher>(
        &self,
        tools: &[Tool],
        by_name: &HashMap<CallName, usize, S>,
        key: Option<&[u8]>,
    ) -> Result<Vec<bool>, ResumeError> {
        if self.format != FORMAT || self.version != VERSION {
            return Err(ResumeError::Version {
                format: self.format.clone(),
                version: self.version,
            });
        }
        self.seal.verify(&self.sealed_bytes(), key)?;
        let mut advertised = vec![false; tools.len()];
        for entry in &self.run.tools {
            let Some(&i) = by_name.get(&*entry.name) else {
                return Err(ResumeError::ToolMissing {
                    tool: entry.name.clone(),
                });
            };
            if fingerprint(&tools[i]) != entry.fingerprint {
                return Err(ResumeError::ToolChanged {
                    tool: entry.name.clone(),
                });
            }
            advertised[i] = true;
        }
        self.check_parts(tools, by_name, &advertised)?;
        Ok(advertised)
    }

    /// The parts fit: the transcript ends with the assistant message whose calls are exactly
    /// the answered and the pending ones, each pending call is of an advertised tool of the
    /// right kind, and the usage covers every turn.
    fn check_parts<S: BuildHasher>(
        &self,
        tools: &[Tool],
        by_name: &HashMap<CallName, usize, S>,
        advertised: &[bool],
    ) -> Result<(), ResumeError> {
        let inconsistent = |reason: &str| ResumeError::Inconsistent {
            reason: reason.to_owned(),
        };
        let run = &self.run;
        if run.pending.is_empty() {
            return Err(inconsistent("it has no pending call"));
        }
        if run.state.usage.is_empty() {
            return Err(inconsistent("its usage does not cover its turns"));
        }
        let Some((Message::Assistant { tool_calls, .. }, before)) =
            run.state.transcript.split_last()
        else {
            return Err(inconsistent(
                "its transcript does not end with the calls that paused",
            ));
        };
        check_transcript(before).map_err(|e| ResumeError::Inconsistent {
            reason: format!("its transcript is not a conversation: {e}"),
        })?;
        let mut seen = vec![false; tool_calls.len()];
        let mut claim = |index: usize, id: &str| -> Result<&ToolCall, ResumeError> {
            match (tool_calls.get(index), seen.get_mut(index)) {
                (Some(call), Some(seen)) if !*seen && &*call.id == id => {
                    *seen = true;
                    Ok(call)
                }
                _ => Err(inconsistent(
                    "a result or pending call does not match a call of its last turn",
                )),
            }
        };
        for answered in &run.results {
            claim(answered.index, &answered.result.call_id)?;
        }
        for pending in &run.pending {
            let call = claim(pending.index, &pending.id)?;
            if *call.name != *pending.tool {
                return Err(inconsistent(
                    "a pending call differs from the call the model made",
                ));
            }
            let tool = by_name
                .get(&*pending.tool)
                .filter(|&&i| advertised.get(i).copied().unwrap_or(false))
                .map(|&i| &tools[i]);
            if !tool.is_some_and(|tool| pending.fits(tool)) {
                return Err(inconsistent(
                    "a pending call is not of an advertised tool of its kind",
                ));
            }
        }
        if seen.iter().any(|seen| !seen) {
            return Err(inconsistent("a call of its last turn has no result"));
        }
        // The final answer's call (O2) is no tool call: the count leaves it out (L2).
        let answers = run
            .results
            .iter()
            .filter(|answered| &*answered.result.name == ANSWER_NAME)
            .count();
        let typed_by_tool = run.state.answer.as_ref().is_some_and(|a| !a.native);
        let counted = seen
            .len()
            .saturating_sub(if typed_by_tool { answers } else { 0 });
        if run.state.calls_made < counted as u64 {
            return Err(inconsistent(
                "its count of calls made misses the calls that paused",
            ));
        }
        Ok(())
    }

    /// What the run used so far (B1): its requests, tokens and calls and its sub-agents'.
    pub(crate) fn used(&self) -> super::options::NestedUsage {
        self.run.state.used()
    }

    /// The typed answer the run wants (O2), as its state keeps it.
    pub(crate) fn answer_state(&self) -> Option<&super::state::AnswerState> {
        self.run.state.answer.as_ref()
    }

    /// The turn's answered results and pending calls, taken apart for resuming.
    pub(crate) fn into_parts(self) -> Content {
        self.run
    }
}
