//! What the application decides for each pending call of a paused run ([`Decision`],
//! [`Decisions`]): approve or deny a call awaiting approval (H4), give the result of a
//! deferred call (H5); approve with edited arguments, allow a tool for the rest of the run,
//! leave some calls pending, and decide the calls of a sub-agent's run (B2, B3).

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::Serialize;
use serde_json::Value;
use tool_core::{BoxError, NOT_APPROVED, render_result};

/// The decision for one pending call.
#[non_exhaustive]
pub enum Decision {
    /// Run the call (H4). At resume its availability is checked and its arguments validated
    /// again before the handler runs; the approval predicate is not asked again.
    Approve,
    /// Do not run the call: the model reads `message` as its result (H4).
    Deny {
        /// What the model reads.
        message: String,
    },
    /// The result of a deferred call (H5): the rendered result, or the failure. It reaches
    /// the model like a handler's (E1, E2).
    Complete(Result<String, BoxError>),
    /// Run the call with these arguments instead of the model's (B3): they are validated
    /// against the tool's schema before anything of the resume runs (an edit that does not
    /// fit refuses the resume), the handler gets them, and the transcript shows them as the
    /// call's.
    ApproveWith {
        /// The arguments the call runs with.
        arguments: Value,
    },
    /// Run the call, and every later call of its tool in this run without asking (B3): the
    /// tool is allowed in the run's state, which a later pause seals.
    AllowForRun,
}

impl Decision {
    /// Denied, with the default message `the call was not approved`.
    pub fn deny() -> Self {
        Decision::Deny {
            message: NOT_APPROVED.to_owned(),
        }
    }

    /// Denied; the model reads `message`.
    pub fn deny_with(message: impl Into<String>) -> Self {
        Decision::Deny {
            message: message.into(),
        }
    }

    /// Approved with `arguments` in place of the model's (B3): see [`Decision::ApproveWith`].
    pub fn approve_with(arguments: Value) -> Self {
        Decision::ApproveWith { arguments }
    }

    /// Approved, and the call's tool allowed for the rest of the run (B3).
    pub fn allow_for_run() -> Self {
        Decision::AllowForRun
    }

    /// Whether the decision runs the call.
    pub(crate) fn approves(&self) -> bool {
        matches!(
            self,
            Decision::Approve | Decision::ApproveWith { .. } | Decision::AllowForRun
        )
    }

    /// A deferred call's result: rendered as a handler's is (E1: a JSON string as its text,
    /// anything else as JSON). A value that cannot be rendered is a failure (E2).
    pub fn result<T: Serialize + ?Sized>(value: &T) -> Self {
        Decision::Complete(render_result(value))
    }

    /// A deferred call that failed: the model reads `the tool failed`, or the text of a
    /// [`tool_core::ToolError`] in the error's chain (E2); a [`tool_core::Permanent`] ends the
    /// run (P1).
    pub fn failed(error: impl Into<BoxError>) -> Self {
        Decision::Complete(Err(error.into()))
    }
}

impl fmt::Debug for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Approve => f.write_str("Approve"),
            Decision::AllowForRun => f.write_str("AllowForRun"),
            Decision::ApproveWith { arguments } => f
                .debug_struct("ApproveWith")
                .field("arguments", arguments)
                .finish(),
            Decision::Deny { message } => f.debug_struct("Deny").field("message", message).finish(),
            Decision::Complete(Ok(text)) => f.debug_tuple("Complete").field(text).finish(),
            Decision::Complete(Err(error)) => f
                .debug_tuple("Failed")
                .field(&format_args!("{error}"))
                .finish(),
        }
    }
}

/// One decision per pending call, by call id (H4); give them to [`crate::Agent::resume`].
///
/// ```
/// use tool_runtime::Decisions;
///
/// let decisions = Decisions::new()
///     .approve("call-1")
///     .deny_with("call-2", "Not during business hours.")
///     .result("call-3", &serde_json::json!({"shipped": true}));
/// assert_eq!(decisions.len(), 3);
/// ```
///
/// A later decision for the same call replaces the earlier one.
///
/// A call of a sub-agent that paused inside it (B2) is decided by the decisions of the
/// sub-agent's run, given under the call that started it ([`Decisions::nested`]); the paths
/// of every pending call, at any depth, are in [`crate::PausedRun::pending_paths`].
#[derive(Debug, Default)]
pub struct Decisions {
    by_id: HashMap<String, Decision>,
    /// The decisions of the sub-agent runs that paused, by the call that started each.
    nested: BTreeMap<String, Decisions>,
    /// Whether a pending call without a decision stays pending (B3).
    partial: bool,
}

impl Decisions {
    /// No decision yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decides call `call_id`.
    #[must_use]
    pub fn decide(mut self, call_id: impl Into<String>, decision: Decision) -> Self {
        self.insert(call_id, decision);
        self
    }

    /// Decides call `call_id`, in place.
    pub fn insert(&mut self, call_id: impl Into<String>, decision: Decision) {
        self.by_id.insert(call_id.into(), decision);
    }

    /// Approves call `call_id`.
    #[must_use]
    pub fn approve(self, call_id: impl Into<String>) -> Self {
        self.decide(call_id, Decision::Approve)
    }

    /// Denies call `call_id` with the default message `the call was not approved`.
    #[must_use]
    pub fn deny(self, call_id: impl Into<String>) -> Self {
        self.decide(call_id, Decision::deny())
    }

    /// Denies call `call_id`; the model reads `message`.
    #[must_use]
    pub fn deny_with(self, call_id: impl Into<String>, message: impl Into<String>) -> Self {
        self.decide(call_id, Decision::deny_with(message))
    }

    /// Gives the result of deferred call `call_id` (E1).
    #[must_use]
    pub fn result<T: Serialize + ?Sized>(self, call_id: impl Into<String>, value: &T) -> Self {
        self.decide(call_id, Decision::result(value))
    }

    /// Gives the failure of deferred call `call_id` (E2).
    #[must_use]
    pub fn failed(self, call_id: impl Into<String>, error: impl Into<BoxError>) -> Self {
        self.decide(call_id, Decision::failed(error))
    }

    /// Approves call `call_id` with `arguments` in place of the model's (B3).
    #[must_use]
    pub fn approve_with(self, call_id: impl Into<String>, arguments: Value) -> Self {
        self.decide(call_id, Decision::approve_with(arguments))
    }

    /// Approves call `call_id` and allows its tool for the rest of the run (B3).
    #[must_use]
    pub fn allow_for_run(self, call_id: impl Into<String>) -> Self {
        self.decide(call_id, Decision::allow_for_run())
    }

    /// Gives `decisions` to the sub-agent run that call `call_id` started and that paused
    /// (B2): they decide that run's pending calls, at its own level (and, nested again, at
    /// the levels below it). Decisions given twice for one call are merged, the later
    /// winning.
    #[must_use]
    pub fn nested(mut self, call_id: impl Into<String>, decisions: Decisions) -> Self {
        let entry = self.nested.entry(call_id.into()).or_default();
        entry.partial |= decisions.partial;
        entry.by_id.extend(decisions.by_id);
        for (id, below) in decisions.nested {
            *entry = std::mem::take(entry).nested(id, below);
        }
        self
    }

    /// Decides the call at `path` (B2): the ids of the calls that started each sub-agent
    /// run, then the pending call's own id, as [`crate::agent::PendingAt::path`] names it. A path of
    /// one id is [`Decisions::decide`].
    #[must_use]
    pub fn decide_at<I, S>(self, path: I, decision: Decision) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut ids: Vec<String> = path.into_iter().map(Into::into).collect();
        let Some(last) = ids.pop() else {
            return self;
        };
        let mut inner = Decisions::new().decide(last, decision);
        while let Some(id) = ids.pop() {
            if ids.is_empty() {
                return self.nested(id, inner);
            }
            inner = Decisions::new().nested(id, inner);
        }
        let Decisions { by_id, .. } = inner;
        let mut this = self;
        this.by_id.extend(by_id);
        this
    }

    /// Leaves every pending call without a decision pending (B3): the decided calls run, and
    /// the run pauses again with the others once they end. Without it, a pending call left
    /// undecided refuses the resume (H4). It holds at every level of nested decisions.
    #[must_use]
    pub fn leave_pending(mut self) -> Self {
        self.partial = true;
        self
    }

    /// Whether undecided calls stay pending ([`Decisions::leave_pending`]).
    pub fn leaves_pending(&self) -> bool {
        self.partial
    }

    /// How many calls are decided, at this level (sub-agent runs with decisions count one
    /// each).
    pub fn len(&self) -> usize {
        self.by_id.len() + self.nested.len()
    }

    /// Whether no call is decided.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty() && self.nested.is_empty()
    }

    /// Takes the decisions for the sub-agent run of call `call_id` out; they leave calls
    /// pending when these do.
    pub(crate) fn take_nested(&mut self, call_id: &str) -> Option<Decisions> {
        let partial = self.partial;
        self.nested.remove(call_id).map(|mut nested| {
            nested.partial |= partial;
            nested
        })
    }

    /// The decision for `call_id`, if there is one.
    pub(crate) fn get(&self, call_id: &str) -> Option<&Decision> {
        self.by_id.get(call_id)
    }

    /// The decisions for the sub-agent run of call `call_id`, if there are.
    pub(crate) fn get_nested(&self, call_id: &str) -> Option<&Decisions> {
        self.nested.get(call_id)
    }

    /// Takes the decision for `call_id` out.
    pub(crate) fn take(&mut self, call_id: &str) -> Option<Decision> {
        self.by_id.remove(call_id)
    }

    /// The ids of the decided calls (sub-agent runs included), in sorting order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = &str> {
        let mut ids: Vec<&str> = self
            .by_id
            .keys()
            .chain(self.nested.keys())
            .map(String::as_str)
            .collect();
        ids.sort_unstable();
        ids.into_iter()
    }
}
