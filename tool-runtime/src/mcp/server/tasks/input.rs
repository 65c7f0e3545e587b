//! A task that waits for input (M9, the Tasks extension of 2026-07-28): a task's handler asks
//! its user through its context (`ctx.elicit::<T>`, `elicit_named`), the task then shows
//! `input_required` with the question under its key on `tasks/get`, and the client answers
//! with `tasks/update`; questions asked at once wait together and may be answered one at a
//! time, the task working again once none is pending. A task holds at most
//! [`MAX_QUESTIONS`] questions in its life, each key once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use tool_core::elicit::{ElicitAnswer, ElicitError, ElicitFuture, Elicitor};

use super::store::{NotAsked, Task};
use crate::mcp::server::rounds::{answer_of, elicitation_request};

/// The most questions one task may ask.
pub(crate) const MAX_QUESTIONS: usize = 16;

/// Asks a task's questions of its client through the task.
pub(crate) struct TaskElicitor {
    task: Arc<Task>,
    /// Whether the client declared elicitation.
    can_ask: bool,
    asked: AtomicUsize,
}

impl TaskElicitor {
    /// The questions of `task`, for a client that declared elicitation (`can_ask`) or not.
    pub(crate) fn new(task: Arc<Task>, can_ask: bool) -> Arc<Self> {
        Arc::new(Self {
            task,
            can_ask,
            asked: AtomicUsize::new(0),
        })
    }

    async fn ask(
        &self,
        key: Option<&str>,
        message: &str,
        schema: &Value,
    ) -> Result<ElicitAnswer, ElicitError> {
        if !self.can_ask {
            return Err(ElicitError::Unsupported);
        }
        let request = elicitation_request(message, schema).map_err(ElicitError::Failed)?;
        let index = self.asked.fetch_add(1, Ordering::Relaxed);
        if index >= MAX_QUESTIONS {
            return Err(ElicitError::Failed(format!(
                "a task may ask at most {MAX_QUESTIONS} questions"
            )));
        }
        let key = key.map_or_else(|| format!("question-{index}"), str::to_owned);
        let answered = match self.task.ask(key.clone(), request) {
            Ok(answered) => answered,
            Err(NotAsked::KeyTaken) => {
                return Err(ElicitError::Key {
                    key,
                    reason: "another question of this task had that name",
                });
            }
            Err(NotAsked::Ended) => return Ok(ElicitAnswer::Cancel),
        };
        tokio::select! {
            answer = answered => Ok(answer.map_or(ElicitAnswer::Cancel, |value| answer_of(&value))),
            () = self.task.cancel.cancelled() => Ok(ElicitAnswer::Cancel),
        }
    }
}

impl Elicitor for TaskElicitor {
    fn elicit<'a>(&'a self, message: &'a str, schema: &'a Value) -> ElicitFuture<'a> {
        Box::pin(self.ask(None, message, schema))
    }

    fn elicit_named<'a>(
        &'a self,
        key: &'a str,
        message: &'a str,
        schema: &'a Value,
    ) -> ElicitFuture<'a> {
        Box::pin(self.ask(Some(key), message, schema))
    }
}
