//! [`PauseLedger`]: the record of the pauses already resumed, so that a paused run resumes
//! once (H9); [`MemoryLedger`], one that lives in this process.

use std::collections::HashSet;
use std::sync::Mutex;

use tool_core::BoxError;
pub use tool_core::policy::BoxFuture;

/// Where the pauses already resumed are recorded (H9). Give one to the resume
/// ([`crate::AgentBuilder::ledger`], or [`crate::ResumeOptions::ledger`]): before anything of a
/// paused run runs, the resume consumes its pause id; a pause consumed before is refused with
/// [`crate::ResumeError::Replayed`] and nothing runs, so the approved calls of a saved state
/// never run twice.
///
/// `consume` must be atomic: of two resumes of one pause racing (two processes, one state),
/// exactly one may see `Ok(true)`. A database does it with a unique key (`INSERT … ON CONFLICT
/// DO NOTHING`, then the number of rows inserted).
pub trait PauseLedger: Send + Sync + 'static {
    /// Consumes pause `pause_id` of run `run_id`: `Ok(true)` when this call consumed it,
    /// `Ok(false)` when it was consumed before.
    ///
    /// # Errors
    ///
    /// The store's failure: the resume is refused ([`crate::ResumeError::Ledger`]) and nothing
    /// runs.
    fn consume<'a>(
        &'a self,
        run_id: &'a str,
        pause_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, BoxError>>;
}

/// A [`PauseLedger`] in this process's memory: it refuses a second resume of a pause in the
/// same process, and forgets everything when the process ends. It grows by one id per
/// resume; a long-lived service that resumes in several processes keeps its ledger in its
/// database instead.
///
/// ```
/// use tool_runtime::{MemoryLedger, PauseLedger};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let ledger = MemoryLedger::new();
/// assert!(ledger.consume("run_1", "pause_1").await?);
/// assert!(!ledger.consume("run_1", "pause_1").await?);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default)]
pub struct MemoryLedger {
    consumed: Mutex<HashSet<String>>,
}

impl MemoryLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many pauses it consumed.
    pub fn len(&self) -> usize {
        self.consumed
            .lock()
            .map(|set| set.len())
            .unwrap_or_default()
    }

    /// Whether it consumed none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PauseLedger for MemoryLedger {
    fn consume<'a>(
        &'a self,
        _run_id: &'a str,
        pause_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, BoxError>> {
        let consumed = match self.consumed.lock() {
            Ok(mut set) => Ok(set.insert(pause_id.to_owned())),
            Err(_) => Err(BoxError::from("the ledger's lock was poisoned")),
        };
        Box::pin(std::future::ready(consumed))
    }
}
