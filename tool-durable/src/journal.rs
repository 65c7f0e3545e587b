//! [`RestateJournal`]: a run's journal in Restate (W1). Each step is one `ctx.run` of the
//! workflow's invocation, named for the step; a replayed invocation gets each recorded step's
//! result from Restate's journal without running it.

use std::sync::{Mutex, PoisonError};

use restate_sdk::prelude::*;
use serde_json::Value;
use tool_runtime::journal::{Journal, JournalError, Step, StepKind};
use tool_runtime::{BoxFuture, Usage};

use crate::state;

/// The status code of a Restate terminal error that says the invocation was cancelled.
pub(crate) const CANCELLED: u16 = 409;

/// A run's journal in a Restate workflow invocation: its steps are `ctx.run` entries, its id
/// is the workflow's key. After each model request it writes the run's usage so far to the
/// workflow's state, for [`crate::RunStatus`] (W5).
pub(crate) struct RestateJournal<'a> {
    ctx: &'a WorkflowContext<'a>,
    usage: Mutex<Usage>,
}

impl<'a> RestateJournal<'a> {
    pub(crate) fn new(ctx: &'a WorkflowContext<'a>) -> Self {
        Self {
            ctx,
            usage: Mutex::new(Usage::default()),
        }
    }

    /// The run's usage so far, as its recorded replies say.
    pub(crate) fn usage(&self) -> Usage {
        *self.usage.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds a recorded reply's usage to the run's, and writes the total to the state.
    fn count(&self, value: &Value) {
        let Some(usage) = value
            .get("reply")
            .and_then(|reply| reply.get("usage"))
            .and_then(|usage| serde_json::from_value::<Usage>(usage.clone()).ok())
        else {
            return;
        };
        let total = {
            let mut total = self.usage.lock().unwrap_or_else(PoisonError::into_inner);
            total.input_tokens = total.input_tokens.saturating_add(usage.input_tokens);
            total.output_tokens = total.output_tokens.saturating_add(usage.output_tokens);
            *total
        };
        self.ctx.set(state::USAGE, Json(total));
    }
}

impl Journal for RestateJournal<'_> {
    fn run_id(&self) -> &str {
        self.ctx.key()
    }

    fn step<'b>(&'b self, step: Step<'b>) -> BoxFuture<'b, Result<Value, JournalError>> {
        Box::pin(async move {
            let kind = step.kind().clone();
            let name = kind.to_string();
            let work = step.into_future();
            // A step that asks to be retried fails the attempt: Restate retries the whole
            // invocation under the workflow's retry policy (and parks it when that policy
            // says so, W5), replaying the recorded steps and taking this one again.
            let ctx: &'b WorkflowContext<'b> = self.ctx;
            let recorded = ctx
                .run(move || async move {
                    match work.await {
                        Ok(value) => Ok(Json(value)),
                        Err(retry) => Err(HandlerError::from(retry)),
                    }
                })
                .name(name.clone())
                .await;
            match recorded {
                Ok(Json(value)) => {
                    if matches!(kind, StepKind::Request { .. }) {
                        self.count(&value);
                    }
                    Ok(value)
                }
                // Restate answers an operator's cancel with 409 on whatever the run awaits.
                Err(terminal) if terminal.code() == CANCELLED => Err(JournalError::cancelled(name)),
                Err(terminal) => Err(JournalError::new(name, terminal.message().to_owned())),
            }
        })
    }
}
