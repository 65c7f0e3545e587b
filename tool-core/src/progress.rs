//! Progress that a handler reports through its [`Context`](crate::Context) (K3): the values
//! of one report ([`Progress`]) and where a transport sends them.
//!
//! A handler calls [`Context::progress`](crate::Context::progress); the transport that runs
//! the call decides where the report goes: the agent's stream shows it as an event, an MCP
//! server sends it as `notifications/progress` to a client that gave a progress token. When
//! nobody listens the call costs a branch.

use std::fmt;
use std::sync::Arc;

/// One progress report of a call (K3): how much is done, of how much when that is known, and
/// what is being done.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// How much is done so far. It should grow with every report, even when the total is
    /// unknown.
    pub done: f64,
    /// How much there is to do, when known.
    pub total: Option<f64>,
    /// What is being done, for a person to read.
    pub message: Option<String>,
}

impl Progress {
    /// A report of `done`, with no total and no message.
    pub fn new(done: f64) -> Self {
        Self {
            done,
            total: None,
            message: None,
        }
    }

    /// The same report, out of `total`.
    #[must_use]
    pub fn with_total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// The same report, with `message`.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// Where the progress of one call goes, as its transport set it on the call's context.
#[derive(Clone)]
pub(crate) struct Listener(Arc<dyn Fn(Progress) + Send + Sync>);

impl Listener {
    pub(crate) fn new(listener: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        Self(Arc::new(listener))
    }

    /// Sends one report, unless a value is not finite (NaN or infinite progress means
    /// nothing to a reader, and MCP's JSON cannot carry it).
    pub(crate) fn report(&self, done: f64, total: Option<f64>, message: Option<&str>) {
        if !done.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return;
        }
        (self.0)(Progress {
            done,
            total,
            message: message.map(str::to_owned),
        });
    }
}

impl fmt::Debug for Listener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Listener")
    }
}
