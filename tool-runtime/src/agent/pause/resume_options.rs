//! [`ResumeOptions`]: what a resume may add to the run it continues (H7, H9).

use std::fmt;
use std::sync::Arc;

use super::ledger::PauseLedger;
use crate::agent::options::UsageLimits;

/// What one resume adds to the paused run it continues ([`crate::RunRequest::resume_options`]).
///
/// A resumed run follows the options it was started with (H7): they are sealed in the paused
/// run. A resume may *tighten* its usage limits (each limit becomes the smaller of the two,
/// [`UsageLimits::tightened`]) and give a [`PauseLedger`]; it cannot loosen a limit, change the
/// tools the run stops at, its tool choice or its typed answer, nor the tools it advertised.
#[derive(Clone, Default)]
pub struct ResumeOptions {
    pub(crate) limits: Option<UsageLimits>,
    pub(crate) ledger: Option<Arc<dyn PauseLedger>>,
}

impl ResumeOptions {
    /// Nothing added: the run's own options, and the agent's ledger if it has one.
    pub fn new() -> Self {
        Self::default()
    }

    /// Tightens the run's usage limits by `limits` (H7): a limit can only come down.
    #[must_use]
    pub fn limits(mut self, limits: UsageLimits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// Consumes the pause in `ledger` before anything runs (H9), instead of the agent's.
    #[must_use]
    pub fn ledger(mut self, ledger: impl PauseLedger) -> Self {
        self.ledger = Some(Arc::new(ledger));
        self
    }

    /// As [`ResumeOptions::ledger`], with a ledger already shared.
    #[must_use]
    pub fn shared_ledger(mut self, ledger: Arc<dyn PauseLedger>) -> Self {
        self.ledger = Some(ledger);
        self
    }
}

impl fmt::Debug for ResumeOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResumeOptions")
            .field("limits", &self.limits)
            .field("ledger", &self.ledger.is_some())
            .finish()
    }
}
