//! What a run gives back: the final answer, the transcript, usage per turn, and the record
//! of every call (E3).

use std::sync::Arc;

use tool_core::{CallId, CallName, Error, Outcome, OutcomeKind, Violation};

use crate::model::{Message, Usage};

/// A run that reached a final answer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunOutput {
    /// The final answer: the text of the last turn.
    pub text: String,
    /// The whole conversation: the input, then every turn (the assistant's message and the
    /// results of its calls, in call order). Pass it to a new run to continue
    /// ([`crate::Input`]).
    pub transcript: Vec<Message>,
    /// Token usage of each turn, from turn 1.
    pub usage: Vec<Usage>,
    /// Every call made, in call order (E3).
    pub calls: Vec<CallRecord>,
    /// The names of the tools advertised to the model in this run, in declaration order
    /// (fixed for the run, A2, A8).
    pub advertised: Arc<[String]>,
    /// The tool whose successful call ended the run (L5): `text` is that call's result.
    pub stopped_at: Option<String>,
    /// The length of `transcript` as the run wrote it: a closed conversation that
    /// `Input::from(output)` need not check again.
    pub(crate) written: usize,
}

impl RunOutput {
    /// The number of turns (model requests) the run took.
    pub fn turns(&self) -> usize {
        self.usage.len()
    }

    /// Token usage of the whole run.
    pub fn total_usage(&self) -> Usage {
        self.usage.iter().copied().sum()
    }
}

/// One call, as the application sees it (E3): what the model sent, what it got back, and
/// what was hidden from it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CallRecord {
    /// The turn of the call, from 1.
    pub turn: usize,
    /// The call's position in its turn, from 0 (the model's order).
    pub index: usize,
    /// The call id (shared with the call's).
    pub id: CallId,
    /// The tool name the model used (untrusted: it may name no tool).
    pub name: CallName,
    /// The raw arguments the model sent (untrusted: never logged).
    pub arguments: String,
    /// How the call ended, with the model-facing text and the unredacted error.
    pub outcome: Outcome,
    /// What the model sent, when the agent's repair step (Q4) rewrote it into `arguments`
    /// before validation; `None` when the arguments were taken as sent.
    pub repaired_from: Option<String>,
}

impl CallRecord {
    /// How the call ended.
    pub fn kind(&self) -> OutcomeKind {
        self.outcome.kind()
    }

    /// The text the model received.
    pub fn text(&self) -> &str {
        self.outcome.text()
    }

    /// The unredacted error, for the application (E3).
    pub fn error(&self) -> Option<&Error> {
        self.outcome.error()
    }

    /// The schema violations, when the arguments broke the schema.
    pub fn violations(&self) -> &[Violation] {
        self.outcome.violations()
    }
}
