//! A task that waits for input (M9, the Tasks extension of 2026-07-28): a task's handler asks
//! its user (`ctx.elicit::<T>`, `elicit_named`), the client's model (`ctx.sample`) or the
//! client's roots (`ctx.roots`) through its context; the task then shows `input_required` with
//! the request under its key on `tasks/get`, and the client answers with `tasks/update`;
//! requests made at once wait together and may be answered one at a time, the task working
//! again once none is pending. A task holds at most [`MAX_QUESTIONS`] requests in its life,
//! each key once, and asks only what its client declared it answers.
// Sampling and roots are deprecated by SEP-2577 in rmcp's types; 2026-07-28 still has them.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{CreateMessageRequest, InputRequest, ListRootsRequest};
use serde_json::Value;
use tool_core::elicit::{ElicitAnswer, ElicitError, ElicitFuture, Elicitor};
use tool_core::roots::{RootsError, RootsFuture, RootsSource};
use tool_core::sampling::{SampleError, SampleFuture, Sampler, SamplingRequest};

use super::store::{NotAsked, Task};
use crate::mcp::server::rounds::{Declared, answer_of, elicitation_request};
use crate::mcp::server::{roots, sampling};

/// The most requests one task may make of its client.
pub(crate) const MAX_QUESTIONS: usize = 16;

/// Asks a task's questions of its client through the task.
pub(crate) struct TaskQuestions {
    task: Arc<Task>,
    /// What the client declared it answers.
    declared: Declared,
    asked: AtomicUsize,
}

/// Why a request was not answered.
enum Unanswered {
    /// The task was cancelled or ended while it waited (or before it was asked).
    Ended,
    /// The request cannot be made: too many, or its key taken.
    Refused(String),
    /// Another request of the task had the key.
    KeyTaken(String),
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

    /// Makes `request` of the client under `key` (else `question-N`) and waits for its answer.
    async fn ask(&self, key: Option<&str>, request: InputRequest) -> Result<Value, Unanswered> {
        let index = self.asked.fetch_add(1, Ordering::Relaxed);
        if index >= MAX_QUESTIONS {
            return Err(Unanswered::Refused(format!(
                "a task may ask at most {MAX_QUESTIONS} questions"
            )));
        }
        let key = key.map_or_else(|| format!("question-{index}"), str::to_owned);
        let answered = match self.task.ask(key.clone(), request) {
            Ok(answered) => answered,
            Err(NotAsked::KeyTaken) => return Err(Unanswered::KeyTaken(key)),
            Err(NotAsked::Ended) => return Err(Unanswered::Ended),
        };
        tokio::select! {
            answer = answered => answer.map_err(|_| Unanswered::Ended),
            () = self.task.cancel.cancelled() => Err(Unanswered::Ended),
        }
    }

    async fn elicit_as(
        &self,
        key: Option<&str>,
        message: &str,
        schema: &Value,
    ) -> Result<ElicitAnswer, ElicitError> {
        if !self.declared.elicitation {
            return Err(ElicitError::Unsupported);
        }
        let request = elicitation_request(message, schema).map_err(ElicitError::Failed)?;
        match self.ask(key, request).await {
            Ok(answer) => Ok(answer_of(&answer)),
            Err(Unanswered::Ended) => Ok(ElicitAnswer::Cancel),
            Err(Unanswered::Refused(reason)) => Err(ElicitError::Failed(reason)),
            Err(Unanswered::KeyTaken(key)) => Err(ElicitError::Key {
                key,
                reason: "another question of this task had that name",
            }),
        }
    }
}

impl Elicitor for TaskQuestions {
    fn elicit<'a>(&'a self, message: &'a str, schema: &'a Value) -> ElicitFuture<'a> {
        Box::pin(self.elicit_as(None, message, schema))
    }

    fn elicit_named<'a>(
        &'a self,
        key: &'a str,
        message: &'a str,
        schema: &'a Value,
    ) -> ElicitFuture<'a> {
        Box::pin(self.elicit_as(Some(key), message, schema))
    }
}

impl Sampler for TaskQuestions {
    fn sample<'a>(
        &'a self,
        key: Option<&'a str>,
        request: &'a SamplingRequest,
    ) -> SampleFuture<'a> {
        Box::pin(async move {
            if !self.declared.sampling {
                return Err(SampleError::Unsupported);
            }
            let asked = InputRequest::CreateMessage(CreateMessageRequest::new(
                sampling::params_of(request),
            ));
            match self.ask(key, asked).await {
                Ok(answer) => sampling::answer_of_value(&answer),
                Err(Unanswered::Ended) => Err(SampleError::Cancelled),
                Err(Unanswered::Refused(reason)) => Err(SampleError::Failed(reason)),
                Err(Unanswered::KeyTaken(_)) => Err(SampleError::Request(
                    "another question of this task had that name",
                )),
            }
        })
    }
}

impl RootsSource for TaskQuestions {
    fn roots<'a>(&'a self, key: Option<&'a str>) -> RootsFuture<'a> {
        Box::pin(async move {
            if !self.declared.roots {
                return Err(RootsError::Unsupported);
            }
            let asked = InputRequest::ListRoots(ListRootsRequest::default());
            match self.ask(key, asked).await {
                Ok(answer) => roots::roots_of_value(&answer),
                Err(Unanswered::Ended) => Err(RootsError::Cancelled),
                Err(Unanswered::Refused(reason)) => Err(RootsError::Failed(reason)),
                Err(Unanswered::KeyTaken(key)) => Err(RootsError::Key(key)),
            }
        })
    }
}

/// `call_ctx` asking its questions (elicitation, sampling, roots) in its task.
pub(crate) fn questions_in(
    call_ctx: tool_core::Context,
    asks: &Arc<TaskQuestions>,
) -> tool_core::Context {
    call_ctx
        .with_elicitor(Arc::clone(asks) as Arc<dyn Elicitor>)
        .with_sampler(Arc::clone(asks) as Arc<dyn Sampler>)
        .with_roots_source(Arc::clone(asks) as Arc<dyn RootsSource>)
}
