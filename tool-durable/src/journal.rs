//! [`RestateJournal`]: a run's journal in Restate (W1). Each step is one `ctx.run` of the
//! workflow's invocation, named for the step; a replayed invocation gets each recorded step's
//! result from Restate's journal without running it.

use std::sync::{Mutex, PoisonError};

use restate_sdk::context::RequestTarget;
use restate_sdk::prelude::*;
use serde_json::Value;
use tool_runtime::journal::{CallBatch, CallResults, Journal, JournalError, Step, StepKind};
use tool_runtime::{BoxFuture, Usage};

use crate::state;
use crate::types::CallRequest;

/// The workflow's shared handler that runs one call of a run as an invocation of its own (W9).
pub(crate) const CALL_HANDLER: &str = "call";

/// The status code of a Restate terminal error that says the invocation was cancelled.
pub(crate) const CANCELLED: u16 = 409;

/// The status code of the terminal failure a step records instead of a result too large for
/// the engine (W10).
const TOO_LARGE: u16 = 413;

/// A run's journal in a Restate workflow invocation: its steps are `ctx.run` entries, its id
/// is the workflow's key. After each model request it writes the run's usage so far to the
/// workflow's state, for [`crate::RunStatus`] (W5).
///
/// With [`RestateJournal::parallel`], it takes a turn's calls concurrently (W9): each call an
/// invocation of the workflow's `call` handler, keyed by the run, started in the model's order,
/// at most `max_concurrency` in flight.
pub(crate) struct RestateJournal<'a> {
    ctx: &'a WorkflowContext<'a>,
    /// The workflow's name, and the run's context data each call's invocation gets (W9).
    parallel: Option<(String, Value)>,
    usage: Mutex<Usage>,
    /// The largest result a step may record, in bytes of JSON.
    max_step: usize,
    /// Why a step's result was refused, when one was too large.
    too_large: Mutex<Option<String>>,
}

impl<'a> RestateJournal<'a> {
    pub(crate) fn new(ctx: &'a WorkflowContext<'a>, max_step: usize) -> Self {
        Self {
            ctx,
            parallel: None,
            usage: Mutex::new(Usage::default()),
            max_step,
            too_large: Mutex::new(None),
        }
    }

    /// The same journal, taking a turn's calls concurrently as invocations of the workflow
    /// `workflow`'s `call` handler, each given the run's `context` data (W9).
    pub(crate) fn parallel(mut self, workflow: &str, context: Value) -> Self {
        self.parallel = Some((workflow.to_owned(), context));
        self
    }

    /// Keeps why a step's result was refused as too large, and answers the journal's error.
    fn refused(&self, step: String, reason: String) -> JournalError {
        *self
            .too_large
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(reason.clone());
        JournalError::new(step, reason)
    }

    /// Why a step's result was refused as too large for the engine, if one was: the run ends
    /// with it, since every attempt would make the same result (W10).
    pub(crate) fn too_large(&self) -> Option<String> {
        self.too_large
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
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
            let (max_step, step_name) = (self.max_step, name.clone());
            let recorded = ctx
                .run(move || async move {
                    match work.await {
                        Ok(value) => fitting(&step_name, value, max_step).map(Json),
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
                Err(terminal) if terminal.code() == TOO_LARGE => {
                    Err(self.refused(name, terminal.message().to_owned()))
                }
                Err(terminal) => Err(JournalError::new(name, terminal.message().to_owned())),
            }
        })
    }

    fn parallel_calls(&self) -> bool {
        self.parallel.is_some()
    }

    /// Each call an invocation of the workflow's `call` handler (W9), started in the batch's
    /// order, at most the batch's limit in flight: the journal holds the calls' commands in
    /// that order, and each result as the engine delivered it, so a replay starts the same
    /// calls at the same points. Waiting for them ends the attempt (request-response mode,
    /// W7); the engine takes the run up again as each call ends.
    fn calls<'b>(
        &'b self,
        batch: CallBatch<'b>,
    ) -> BoxFuture<'b, Result<CallResults, JournalError>> {
        Box::pin(async move {
            let Some((workflow, context)) = &self.parallel else {
                return Err(JournalError::new(
                    "calls",
                    "this journal takes calls one at a time",
                ));
            };
            let ctx: &'b WorkflowContext<'b> = self.ctx;
            let calls = batch.calls();
            let mut results: CallResults = vec![None; calls.len()];
            let mut running = DurableFuturesUnordered::new();
            let (mut next, mut more) = (0, true);
            loop {
                while more && next < calls.len() && running.len() < batch.limit() {
                    let request = CallRequest {
                        context: context.clone(),
                        call: calls[next].clone(),
                    };
                    let target =
                        RequestTarget::workflow(workflow.as_str(), ctx.key(), CALL_HANDLER);
                    // The stable index the set gives is the call's: both count from 0.
                    running.push(ctx.request::<_, Json<Value>>(target, Json(request)).call());
                    next += 1;
                }
                let ended = running.next().await.map_err(|terminal| {
                    if terminal.code() == CANCELLED {
                        JournalError::cancelled("calls")
                    } else {
                        JournalError::new("calls", terminal.message().to_owned())
                    }
                })?;
                let Some((index, output)) = ended else {
                    break;
                };
                let name = calls[index].kind().to_string();
                let result = match output {
                    Ok(Json(value)) => {
                        more &= batch.ended(index, &value);
                        Ok(value)
                    }
                    Err(terminal) if terminal.code() == CANCELLED => {
                        return Err(JournalError::cancelled(name));
                    }
                    Err(terminal) if terminal.code() == TOO_LARGE => {
                        more = false;
                        Err(self.refused(name, terminal.message().to_owned()))
                    }
                    Err(terminal) => {
                        more = false;
                        Err(JournalError::new(name, terminal.message().to_owned()))
                    }
                };
                results[index] = Some(result);
            }
            Ok(results)
        })
    }
}

/// `value`, when its JSON fits in `max_step` bytes; otherwise a terminal failure that the
/// journal records in its place (a few bytes), saying how large it was: a result past the
/// engine's message limit would fail every attempt to record it (W10).
pub(crate) fn fitting(step: &str, value: Value, max_step: usize) -> Result<Value, HandlerError> {
    let size = serde_json::to_vec(&value).map_or(usize::MAX, |bytes| bytes.len());
    if size <= max_step {
        return Ok(value);
    }
    let reason = format!(
        "step `{step}`: its result is {size} bytes of JSON, over the {max_step} bytes a \
         journaled step may hold (the engine's message limit)"
    );
    tracing::warn!(%reason, "a step's result was too large to journal; the run ends");
    Err(TerminalError::new_with_code(TOO_LARGE, reason).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// W10: a result over the limit is refused with its size and the limit, before it is
    /// journaled; one at the limit is kept.
    #[test]
    fn w10_a_result_over_the_limit_is_refused_before_it_is_journaled() {
        let value = serde_json::json!({"text": "x".repeat(100)});
        let size = serde_json::to_vec(&value)
            .map(|b| b.len())
            .unwrap_or_default();
        assert!(fitting("request 1", value.clone(), size).is_ok());
        let refused = fitting("request 1", value, size - 1)
            .err()
            .map(|e| format!("{e:?}"));
        let refused = refused.unwrap_or_default();
        assert!(
            refused.contains("request 1") && refused.contains(&format!("{size} bytes")),
            "{refused}"
        );
    }
}
