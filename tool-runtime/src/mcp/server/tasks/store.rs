//! The tasks of one server (M5): each task's state, who may see it, how long it is kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use rmcp::model::{DetailedTask, InputRequest, InputResponses, TaskPayload, TaskStatus};
use serde_json::{Map, Value, json};
use tokio::sync::{oneshot, watch};
use tool_core::CancellationToken;

/// What `tasks/result` answers: the call's result, or the JSON-RPC error it got.
pub(crate) type Answer = Result<Value, rmcp::ErrorData>;

/// How long a task is kept after it ends when the client asks for no time (or more than
/// [`MAX_TTL`]).
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(10 * 60);
/// The longest a finished task is kept, whatever the client asks.
pub(crate) const MAX_TTL: Duration = Duration::from_secs(60 * 60);
/// The poll interval the server suggests.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_millis(250);
/// At most this many tasks are kept for one owner, finished ones included.
pub(crate) const MAX_TASKS_PER_OWNER: usize = 100;
/// At most this many tasks are kept in all.
pub(crate) const MAX_TASKS: usize = 10_000;

/// Where a task is, as the protocol names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    pub(crate) fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// Why a task could not be made.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Full {
    /// The owner holds [`MAX_TASKS_PER_OWNER`] tasks.
    Owner,
    /// The server holds [`MAX_TASKS`] tasks.
    Server,
}

/// One task.
pub(crate) struct Task {
    pub(crate) id: String,
    owner: String,
    created: DateTime<Utc>,
    ttl: Duration,
    /// Cancelled by `tasks/cancel`: the call's context is cancelled with it.
    pub(crate) cancel: CancellationToken,
    state: Mutex<State>,
    /// `true` once the task has ended.
    ended: watch::Sender<bool>,
}

struct State {
    status: Status,
    message: Option<String>,
    updated: DateTime<Utc>,
    /// The answer to the call, as `tasks/result` gives it, once it has ended.
    result: Option<Answer>,
    /// The handler's questions the client has not answered yet (M9), in the order asked.
    pending: Vec<Pending>,
    /// Every key the task's questions had: a key names one question in a task's life.
    keys: Vec<String>,
}

impl State {
    /// Forgets the questions whose handler no longer waits for an answer (it gave up on them,
    /// say under a timeout of its own): `tasks/get` shows them no longer, and a task left
    /// with none works again.
    fn forget_abandoned(&mut self) {
        let before = self.pending.len();
        self.pending.retain(|question| !question.answer.is_closed());
        if self.pending.len() < before
            && self.pending.is_empty()
            && self.status == Status::InputRequired
        {
            self.status = Status::Working;
            self.message = None;
            self.updated = Utc::now();
        }
    }
}

/// A question a task waits on: what `tasks/get` shows under its key, and where its answer
/// goes.
struct Pending {
    key: String,
    request: InputRequest,
    answer: oneshot::Sender<Value>,
}

/// Why a task's question was not asked.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NotAsked {
    /// Another question of the task had that key.
    KeyTaken,
    /// The task has ended.
    Ended,
}

impl Task {
    /// The task's state, without the questions whose handler stopped waiting for them.
    fn state(&self) -> MutexGuard<'_, State> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.forget_abandoned();
        state
    }

    /// The task as `tasks/get`, `tasks/list` and the `CreateTaskResult` show it.
    pub(crate) fn to_json(&self) -> Value {
        let state = self.state();
        let mut task = Map::new();
        task.insert("taskId".into(), json!(self.id));
        task.insert("status".into(), json!(state.status.as_str()));
        if let Some(message) = &state.message {
            task.insert("statusMessage".into(), json!(message));
        }
        task.insert("createdAt".into(), json!(timestamp(self.created)));
        task.insert("lastUpdatedAt".into(), json!(timestamp(state.updated)));
        task.insert("ttl".into(), json!(millis(self.ttl)));
        task.insert("pollInterval".into(), json!(millis(POLL_INTERVAL)));
        Value::Object(task)
    }

    /// The task as the Tasks extension of 2026-07-28 shows it (SEP-2663): its handle.
    pub(crate) fn handle(&self) -> rmcp::model::Task {
        let state = self.state();
        let status = match state.status {
            Status::Working => TaskStatus::Working,
            Status::InputRequired => TaskStatus::InputRequired,
            Status::Completed => TaskStatus::Completed,
            Status::Failed => TaskStatus::Failed,
            Status::Cancelled => TaskStatus::Cancelled,
        };
        let task = rmcp::model::Task::new(
            self.id.clone(),
            status,
            timestamp(self.created),
            timestamp(state.updated),
        )
        .with_ttl_ms(millis(self.ttl))
        .with_poll_interval_ms(millis(POLL_INTERVAL));
        match &state.message {
            Some(message) => task.with_status_message(message.clone()),
            None => task,
        }
    }

    /// The task with what it ended with, as `tasks/get` of the Tasks extension gives it: a
    /// tool's result (even one with `isError`) completes it, a JSON-RPC error fails it.
    pub(crate) fn detailed(&self) -> DetailedTask {
        let handle = self.handle();
        let state = self.state();
        let payload = match (state.status, &state.result) {
            (Status::Cancelled, _) => TaskPayload::Cancelled,
            (Status::InputRequired, None) if !state.pending.is_empty() => {
                TaskPayload::InputRequired {
                    input_requests: (state.pending.iter())
                        .map(|pending| (pending.key.clone(), pending.request.clone()))
                        .collect(),
                }
            }
            (_, Some(Ok(Value::Object(result)))) => TaskPayload::Completed {
                result: result.clone(),
            },
            (_, Some(Err(error))) => match serde_json::to_value(error) {
                Ok(Value::Object(error)) => TaskPayload::Failed { error },
                _ => TaskPayload::Failed { error: Map::new() },
            },
            _ => TaskPayload::Working,
        };
        DetailedTask::new(handle, payload)
    }

    /// Moves a task that has not ended to `status`; an ended task stays as it is.
    pub(crate) fn set(&self, status: Status, message: Option<String>) -> bool {
        let mut state = self.state();
        if state.status.is_terminal() {
            return false;
        }
        state.status = status;
        state.message = message;
        state.updated = Utc::now();
        if status.is_terminal() {
            // Its questions go unanswered: the handler is told they were cancelled.
            state.pending.clear();
            drop(state);
            self.ended.send_replace(true);
        }
        true
    }

    /// Asks the task's client `request` under `key` (M9): the task waits on input
    /// (`input_required`, the question shown by `tasks/get`) until `tasks/update` answers
    /// every question pending; the receiver gets this one's answer.
    pub(crate) fn ask(
        &self,
        key: String,
        request: InputRequest,
    ) -> Result<oneshot::Receiver<Value>, NotAsked> {
        let mut state = self.state();
        if state.status.is_terminal() {
            return Err(NotAsked::Ended);
        }
        if state.keys.contains(&key) {
            return Err(NotAsked::KeyTaken);
        }
        let (answer, answered) = oneshot::channel();
        state.keys.push(key.clone());
        state.pending.push(Pending {
            key,
            request,
            answer,
        });
        state.status = Status::InputRequired;
        state.message = Some("waiting for input".to_owned());
        state.updated = Utc::now();
        Ok(answered)
    }

    /// Gives each pending question the answer `responses` holds under its key (any other key
    /// is ignored); once none is pending, the task works again. How many were answered.
    pub(crate) fn answer(&self, responses: &InputResponses) -> usize {
        let mut state = self.state();
        let pending = std::mem::take(&mut state.pending);
        let mut answered = 0;
        for question in pending {
            match responses.get(&question.key) {
                Some(response) => {
                    // A handler that stopped waiting no longer needs it.
                    let _ = question.answer.send(response.clone());
                    answered += 1;
                }
                None => state.pending.push(question),
            }
        }
        if answered > 0 && state.pending.is_empty() && state.status == Status::InputRequired {
            state.status = Status::Working;
            state.message = None;
            state.updated = Utc::now();
        }
        answered
    }

    /// Ends the task with the call's result, unless it was cancelled first.
    pub(crate) fn finish(&self, status: Status, message: Option<String>, result: Answer) {
        let mut state = self.state();
        if state.status.is_terminal() {
            return;
        }
        state.result = Some(result);
        state.pending.clear();
        state.status = status;
        state.message = message;
        state.updated = Utc::now();
        drop(state);
        self.ended.send_replace(true);
    }

    /// Waits until the task has ended; then its status and result (none when cancelled).
    pub(crate) async fn ended(&self) -> (Status, Option<Answer>) {
        let mut ended = self.ended.subscribe();
        // The sender lives as long as the task: `wait_for` cannot fail while `self` does.
        let _ = ended.wait_for(|ended| *ended).await;
        let state = self.state();
        (state.status, state.result.clone())
    }

    fn expired(&self, now: DateTime<Utc>) -> bool {
        let state = self.state();
        state.status.is_terminal()
            && chrono::Duration::from_std(self.ttl).is_ok_and(|ttl| state.updated + ttl <= now)
    }
}

/// The tasks of a server, by id.
#[derive(Default)]
pub(crate) struct Store {
    tasks: Mutex<HashMap<String, Arc<Task>>>,
}

impl Store {
    fn tasks(&self) -> MutexGuard<'_, HashMap<String, Arc<Task>>> {
        self.tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A new working task of `owner`, kept `ttl` (bounded) after it ends. Tasks whose time is
    /// up are let go first.
    pub(crate) fn create(&self, owner: &str, ttl: Option<Duration>) -> Result<Arc<Task>, Full> {
        self.create_cancelled_by(owner, ttl, CancellationToken::new())
    }

    /// As [`Store::create`], for a call already running: `tasks/cancel` cancels `cancel`, the
    /// call's own token (M9, a task that begins after its questions).
    pub(crate) fn create_cancelled_by(
        &self,
        owner: &str,
        ttl: Option<Duration>,
        cancel: CancellationToken,
    ) -> Result<Arc<Task>, Full> {
        let now = Utc::now();
        let mut tasks = self.tasks();
        tasks.retain(|_, task| !task.expired(now));
        if tasks.len() >= MAX_TASKS {
            return Err(Full::Server);
        }
        if tasks.values().filter(|t| t.owner == owner).count() >= MAX_TASKS_PER_OWNER {
            return Err(Full::Owner);
        }
        let task = Arc::new(Task {
            id: crate::agent::new_id("task-"),
            owner: owner.to_owned(),
            created: now,
            ttl: ttl.map_or(DEFAULT_TTL, |ttl| ttl.min(MAX_TTL)),
            cancel,
            state: Mutex::new(State {
                status: Status::Working,
                pending: Vec::new(),
                keys: Vec::new(),
                message: None,
                updated: now,
                result: None,
            }),
            ended: watch::Sender::new(false),
        });
        tasks.insert(task.id.clone(), Arc::clone(&task));
        Ok(task)
    }

    /// The task `id` of `owner`: another owner's task is not found, like one that never was.
    pub(crate) fn get(&self, owner: &str, id: &str) -> Option<Arc<Task>> {
        let now = Utc::now();
        let tasks = self.tasks();
        tasks
            .get(id)
            .filter(|task| task.owner == owner && !task.expired(now))
            .cloned()
    }

    /// The tasks of `owner`, oldest first.
    pub(crate) fn list(&self, owner: &str) -> Vec<Arc<Task>> {
        let now = Utc::now();
        let mut owned: Vec<_> = self
            .tasks()
            .values()
            .filter(|task| task.owner == owner && !task.expired(now))
            .cloned()
            .collect();
        owned.sort_by(|a, b| a.created.cmp(&b.created).then_with(|| a.id.cmp(&b.id)));
        owned
    }
}

fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m5_a_task_is_seen_by_its_owner_only_and_the_store_is_bounded() {
        let store = Store::default();
        let task = store.create("a", None).expect("room");
        assert!(store.get("a", &task.id).is_some());
        assert!(
            store.get("b", &task.id).is_none(),
            "another owner sees nothing"
        );
        for _ in 1..MAX_TASKS_PER_OWNER {
            store.create("a", None).expect("room");
        }
        assert_eq!(store.create("a", None).err(), Some(Full::Owner));
        assert!(store.create("b", None).is_ok(), "the bound is per owner");
        assert_eq!(store.list("a").len(), MAX_TASKS_PER_OWNER);
    }

    #[test]
    fn m5_an_ended_task_keeps_its_end_and_is_let_go_after_its_ttl() {
        let store = Store::default();
        let task = store.create("a", Some(Duration::ZERO)).expect("room");
        assert!(task.set(Status::Cancelled, None));
        task.finish(Status::Completed, None, Ok(json!({"content": []})));
        assert_eq!(
            task.state().status,
            Status::Cancelled,
            "a cancelled task stays cancelled"
        );
        assert!(
            store.get("a", &task.id).is_none(),
            "a ttl of 0 lets it go at once"
        );
        let kept = store
            .create("a", Some(Duration::from_secs(3600 * 24)))
            .expect("room");
        assert_eq!(
            kept.to_json()["ttl"],
            json!(millis(MAX_TTL)),
            "the ttl is bounded"
        );
    }
}
