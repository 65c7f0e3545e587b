//! A task that waits for input (M9, the Tasks extension of 2026-07-28): a task's handler asks
//! its user (`ctx.elicit::<T>`, `elicit_named`), the client's model (`ctx.sample`) or the
//! client's roots (`ctx.roots`) through its context; the task then shows `input_required` with
//! the request under its key on `tasks/get`, and the client answers with `tasks/update`;
//! requests made at once wait together and may be answered one at a time, the task working
//! again once none is pending. A task holds at most [`MAX_QUESTIONS`] requests in its life,
//! each key once, and asks only what its client declared it answers.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use super::store::{NotAsked, Task};
use crate::mcp::server::ask::{Carrier, Declared, NoAnswer, Question};

/// The most requests one task may make of its client.
pub(crate) const MAX_QUESTIONS: usize = 16;

/// Asks a task's questions of its client through the task.
pub(crate) struct TaskQuestions {
    task: Arc<Task>,
    /// What the client declared it answers.
    declared: Declared,
    asked: AtomicUsize,
}

impl TaskQuestions {
    /// The questions of `task`, for a client that declared `declared`.
    pub(crate) fn new(task: Arc<Task>, declared: Declared) -> Arc<Self> {
        Arc::new(Self {
            task,
            declared,
            asked: AtomicUsize::new(0),
        })
    }
}

impl Carrier for TaskQuestions {
    fn declared(&self) -> Declared {
        self.declared
    }

    /// Makes the request of the client under `key` (else `question-N`) and waits for its
    /// answer.
    async fn carry(&self, key: Option<&str>, question: Question<'_>) -> Result<Value, NoAnswer> {
        let request = question.request().map_err(NoAnswer::Failed)?;
        let index = self.asked.fetch_add(1, Ordering::Relaxed);
        if index >= MAX_QUESTIONS {
            return Err(NoAnswer::Failed(format!(
                "a task may ask at most {MAX_QUESTIONS} questions"
            )));
        }
        let key = key.map_or_else(|| format!("question-{index}"), str::to_owned);
        let answered = match self.task.ask(key.clone(), request) {
            Ok(answered) => answered,
            Err(NotAsked::KeyTaken) => {
                return Err(NoAnswer::KeyTaken {
                    key,
                    reason: "another question of this task had that name",
                });
            }
            Err(NotAsked::Ended) => return Err(NoAnswer::Ended),
        };
        tokio::select! {
            answer = answered => answer.map_err(|_| NoAnswer::Ended),
            () = self.task.cancel.cancelled() => Err(NoAnswer::Ended),
        }
    }
}
