//! What the application decides for each pending call of a paused run ([`Decision`],
//! [`Decisions`]): approve or deny a call awaiting approval (H4), give the result of a
//! deferred call (H5).

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;
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
#[derive(Debug, Default)]
pub struct Decisions {
    by_id: HashMap<String, Decision>,
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

    /// How many calls are decided.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether no call is decided.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Takes the decision for `call_id` out.
    pub(crate) fn take(&mut self, call_id: &str) -> Option<Decision> {
        self.by_id.remove(call_id)
    }

    /// The ids of the decided calls, in sorting order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = &str> {
        let mut ids: Vec<&str> = self.by_id.keys().map(String::as_str).collect();
        ids.sort_unstable();
        ids.into_iter()
    }
}
