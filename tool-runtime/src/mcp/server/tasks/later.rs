//! A call that becomes a task after its questions (M9, the Tasks extension of 2026-07-28): a
//! tool declared with [`McpServerBuilder::questions_before_task`](crate::mcp::McpServerBuilder::questions_before_task)
//! runs as a call first. Its handler's questions are asked in the call's own answer
//! (`input_required`, the rounds of M3); when the handler says its work may go on as a task
//! ([`tool_core::Context::continue_as_task`]), the client is answered with the task
//! (`resultType: "task"`, no `requestState`), and the handler goes on inside it: what it asks
//! from then on waits in the task (`tasks/update`), and its end is the task's. A handler that
//! ends first is answered as a plain call.
//!
//! The call runs in a task of the runtime from its start, so nothing of it moves when it
//! becomes a task: until then its request's cancellation cancels it, and `tasks/cancel` after.

use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, CreateTaskResult};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tool_core::{CancellationToken, Context};

use super::Tasks;
use super::call::{Flavor, ended};
use super::input::TaskQuestions;
use super::store::Task;
use crate::mcp::server::ask::{self, Carrier, Declared, NoAnswer, Question};
use crate::mcp::server::rounds::RoundElicitor;

/// What the call's request is answered with.
type Reply = Result<CallToolResponse, ErrorData>;

/// A call that may become a task when its handler says so.
pub(crate) struct Later {
    tasks: Arc<Tasks>,
    owner: String,
    /// The call's own token: its request's cancellation cancels it until the task begins,
    /// `tasks/cancel` after.
    cancel: CancellationToken,
    /// What the client declared it answers: the task asks only that.
    declared: Declared,
    phase: Mutex<Phase>,
}

/// Where the call is.
#[derive(Default)]
struct Phase {
    /// Where the call's answer goes while it is still a call.
    reply: Option<oneshot::Sender<Reply>>,
    /// The task, once the call became one, and what its handler asks through from then on.
    task: Option<(Arc<Task>, Arc<TaskQuestions>)>,
}

impl Later {
    /// A call of `owner`'s that may become one of `tasks`, and where its request's answer
    /// comes from ([`Later::reply`]).
    pub(crate) fn new(
        tasks: &Arc<Tasks>,
        owner: String,
        declared: Declared,
    ) -> (Arc<Self>, oneshot::Receiver<Reply>) {
        let (reply, replied) = oneshot::channel();
        let later = Arc::new(Self {
            tasks: Arc::clone(tasks),
            owner,
            cancel: CancellationToken::new(),
            declared,
            phase: Mutex::new(Phase {
                reply: Some(reply),
                task: None,
            }),
        });
        (later, replied)
    }

    /// What cancels the call.
    pub(crate) fn cancelled(&self) -> &CancellationToken {
        &self.cancel
    }

    fn phase(&self) -> MutexGuard<'_, Phase> {
        self.phase
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes the call a task and answers its request with it, unless it is one already, its
    /// request is gone or cancelled, or a question of its `round` waits to be sent (the run
    /// ends with that question: it is the answer). The round takes no new question after
    /// (they are the task's). A store with no room refuses the call as a task that cannot be
    /// made is refused (M5), and cancels it: its handler said that what follows is long, and
    /// nobody could see it.
    fn begin(&self, round: Option<&RoundElicitor>) {
        let mut phase = self.phase();
        if phase.task.is_some() || self.cancel.is_cancelled() {
            return;
        }
        let Some(reply) = phase.reply.take_if(|reply| !reply.is_closed()) else {
            return;
        };
        if round.is_some_and(|round| !round.close_if_quiet()) {
            phase.reply = Some(reply);
            return;
        }
        let store = &self.tasks.store;
        match store.create_cancelled_by(&self.owner, None, self.cancel.clone()) {
            Ok(task) => {
                let handle = task.handle();
                let asks = TaskQuestions::new(Arc::clone(&task), self.declared);
                phase.task = Some((task, asks));
                let _ = reply.send(Ok(CallToolResponse::Task(CreateTaskResult::new(handle))));
            }
            Err(full) => {
                let _ = reply.send(Err(super::call::refused(full)));
                self.cancel.cancel();
            }
        }
    }

    /// Cancels the call, unless it is a task now (`tasks/cancel` is its client's to send).
    fn cancel_unless_task(&self) {
        if self.phase().task.is_none() {
            self.cancel.cancel();
        }
    }

    /// The call's answer: its request's while it is a call, its task's end after.
    pub(crate) fn finish(&self, answered: Reply) {
        let mut phase = self.phase();
        if let Some((task, _)) = &phase.task {
            let (status, message, answer) = ended(answered, &task.id, Flavor::Extension);
            task.finish(status, message, answer);
        } else if let Some(reply) = phase.reply.take() {
            let _ = reply.send(answered);
        }
    }

    /// The answer to the call's request: the task once it begins, else the call's own answer
    /// (`input_required`, its result, a protocol error). The request's cancellation cancels
    /// the call until then, and so does dropping this future; a call whose task of the
    /// runtime (`running`) ended without an answer is answered with an error.
    pub(crate) async fn reply(
        &self,
        mut replied: oneshot::Receiver<Reply>,
        mut running: JoinHandle<()>,
        cancelled: &CancellationToken,
    ) -> Reply {
        let unanswered = Unanswered(self);
        let mut ended = async |replied: &mut oneshot::Receiver<Reply>| {
            tokio::select! {
                biased;
                answer = &mut *replied => answer.ok(),
                // It answered before it ended, if it answered at all.
                _ = &mut running => replied.try_recv().ok(),
            }
        };
        let answer = tokio::select! {
            biased;
            answer = ended(&mut replied) => answer,
            () = cancelled.cancelled() => {
                self.cancel_unless_task();
                ended(&mut replied).await
            }
        };
        drop(unanswered);
        answer.unwrap_or_else(|| {
            Err(ErrorData::internal_error(
                "the call ended without an answer",
                None,
            ))
        })
    }

    /// `call_ctx` told when its handler says the call goes on as a task; its questions
    /// (elicitation, sampling, roots) asked in `round` (the call's input rounds) until then, in
    /// the task after.
    pub(crate) fn context(
        self: &Arc<Self>,
        call_ctx: Context,
        round: Option<&Arc<RoundElicitor>>,
    ) -> Context {
        // A run that a question ended (M3) is cancelled and winds down: what it says then
        // makes no task, for its answer is that question.
        let (later, run) = (Arc::clone(self), call_ctx.cancellation().clone());
        let asked = round.cloned();
        let call_ctx = call_ctx.with_task_start(Arc::new(move || {
            if !run.is_cancelled() {
                later.begin(asked.as_deref());
            }
        }));
        let Some(round) = round else {
            return call_ctx;
        };
        let questions = Arc::new(Questions {
            later: Arc::clone(self),
            round: Arc::clone(round),
        });
        ask::questions_in(call_ctx, &questions)
    }

    /// What the handler asks through once the call is a task.
    fn task_questions(&self) -> Option<Arc<TaskQuestions>> {
        self.phase().task.as_ref().map(|(_, asks)| Arc::clone(asks))
    }
}

/// Cancels the call when its request is no longer awaited and it is not a task.
struct Unanswered<'a>(&'a Later);

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        self.0.cancel_unless_task();
    }
}

/// A call's questions: in its input rounds until it becomes a task, in the task after.
struct Questions {
    later: Arc<Later>,
    round: Arc<RoundElicitor>,
}

impl Carrier for Questions {
    fn declared(&self) -> Declared {
        self.round.declared()
    }

    /// In the task once the call is one; before, in the rounds, handed to the task after all
    /// when the task's start closed the rounds meanwhile (the round then answers
    /// `Unsupported`).
    async fn carry(&self, key: Option<&str>, question: Question<'_>) -> Result<Value, NoAnswer> {
        if let Some(task) = self.later.task_questions() {
            return task.carry(key, question).await;
        }
        match (
            self.round.carry(key, question).await,
            self.later.task_questions(),
        ) {
            (Err(NoAnswer::Unsupported), Some(task)) => task.carry(key, question).await,
            (asked, _) => asked,
        }
    }
}
