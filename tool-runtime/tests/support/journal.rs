//! A journal whose process dies, for the durable-run tests (`durable_w1_journal.rs`,
//! `compose_b2_durable.rs`).
#![allow(dead_code, unreachable_pub)]

use serde_json::Value;
use tool_runtime::BoxFuture;
use tool_runtime::journal::{Journal, JournalError, MemoryJournal, Step};

/// A journal whose process dies before its step `cut` (from 0) is recorded: the step does
/// not run, and the run ends.
pub struct Dies {
    pub inner: MemoryJournal,
    pub cut: usize,
}

impl Journal for Dies {
    fn run_id(&self) -> &str {
        self.inner.run_id()
    }

    fn step<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Result<Value, JournalError>> {
        if self.inner.steps().len() >= self.cut {
            let name = step.kind().to_string();
            return Box::pin(async move { Err(JournalError::new(name, "the process died")) });
        }
        self.inner.step(step)
    }
}
