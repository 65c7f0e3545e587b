//! [`MemoryJournal`]: a journal in memory, which replays its steps in order.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use super::{BoxFuture, Journal, JournalError, Step, StepKind};

/// A [`Journal`] in memory: the steps of one run, in order. A run given a clone of it after
/// being cut short replays the recorded steps (their futures are not run) and takes the rest.
/// Used by tests to show what a run journals and that a replay runs nothing twice; a run that
/// must outlive its process needs a journal in a durable engine (the `tool-durable` crate).
///
/// A step that asks to be retried is not recorded, and the run ends with kind `Journal`: a
/// [`MemoryJournal::replay`] takes it again.
#[derive(Debug, Clone)]
pub struct MemoryJournal {
    run_id: Arc<str>,
    inner: Arc<Mutex<Recorded>>,
}

#[derive(Debug, Default)]
struct Recorded {
    steps: Vec<(StepKind, Value)>,
    /// Where the current replay has read up to.
    next: usize,
    /// How many step futures ran (replayed steps not counted).
    ran: usize,
}

impl MemoryJournal {
    /// An empty journal for the run `run_id`.
    pub fn new(run_id: impl Into<Arc<str>>) -> Self {
        Self {
            run_id: run_id.into(),
            inner: Arc::default(),
        }
    }

    /// The same journal, read again from its first step: as a restarted process replays it.
    #[must_use]
    pub fn replay(&self) -> Self {
        self.lock().next = 0;
        self.clone()
    }

    /// The recorded steps, in order: each one's kind and result.
    pub fn steps(&self) -> Vec<(StepKind, Value)> {
        self.lock().steps.clone()
    }

    /// How many step futures ran, across replays (a replayed step does not run).
    pub fn ran(&self) -> usize {
        self.lock().ran
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Recorded> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Journal for MemoryJournal {
    fn run_id(&self) -> &str {
        &self.run_id
    }

    fn step<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Result<Value, JournalError>> {
        Box::pin(async move {
            let kind = step.kind().clone();
            {
                let mut recorded = self.lock();
                let at = recorded.next;
                if let Some((was, value)) = recorded.steps.get(at).cloned() {
                    if was != kind {
                        return Err(JournalError::new(
                            kind.to_string(),
                            format!(
                                "the journal holds `{was}` at step {at}: the run is not the one journaled"
                            ),
                        ));
                    }
                    recorded.next += 1;
                    return Ok(value);
                }
            }
            self.lock().ran += 1;
            match step.into_future().await {
                Ok(value) => {
                    let mut recorded = self.lock();
                    recorded.steps.push((kind, value.clone()));
                    recorded.next = recorded.steps.len();
                    Ok(value)
                }
                // Nothing is recorded: a replay takes the step again.
                Err(retry) => Err(JournalError::new(kind.to_string(), retry.to_string())),
            }
        })
    }
}
