//! The events of a streamed run ([`RunEvent`], R4) and the stream that yields them
//! ([`RunStream`]).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll, Waker};

use futures_core::Stream;
use tool_core::{CallId, CallName, Progress};

use super::error::RunError;
use super::output::{CallRecord, RunOutput};
use super::pause::PausedRun;
use crate::model::{FinishReason, ToolCall, Usage};

/// One step of a run, as [`crate::Agent::run_stream`] yields it (R4).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum RunEvent {
    /// Discovery is done (A2): these tools are advertised for the whole run.
    Started {
        /// The advertised tools' names, in declaration order.
        advertised: Arc<[String]>,
    },
    /// A piece of the model's text, as it streams.
    TextDelta {
        /// The turn, from 1.
        turn: usize,
        /// The text.
        text: String,
    },
    /// A tool call, as the model requested it (before it runs).
    ToolCall {
        /// The turn, from 1.
        turn: usize,
        /// The call's position in its turn, from 0.
        index: usize,
        /// The call.
        call: ToolCall,
    },
    /// A call reported progress through its context (K3), while it runs. Reports come in
    /// the order the handler made them.
    Progress {
        /// The turn, from 1.
        turn: usize,
        /// The call's position in its turn, from 0.
        index: usize,
        /// The call id.
        id: CallId,
        /// The tool's name, as the model wrote it.
        tool: CallName,
        /// What the handler reported.
        progress: Progress,
    },
    /// A call ended: the model-facing text and, for the application, the unredacted error
    /// (E3). Calls of one turn end in any order; `record.index` gives the model's order.
    CallFinished(CallRecord),
    /// A turn ended: the model answered and every call it asked for has a result.
    TurnEnd {
        /// The turn, from 1.
        turn: usize,
        /// Tokens used by the turn's request.
        usage: Usage,
        /// Why the model stopped, if its driver said.
        finish: Option<FinishReason>,
    },
    /// The run reached its final answer. The last event of a successful run.
    Finished(RunOutput),
    /// The run paused: some calls wait for approval or for their results (H2, H5). The last
    /// event of a paused run; resume it with [`crate::Agent::resume`] or
    /// [`crate::Agent::execute_stream`] of a [`crate::RunRequest::resume`].
    Paused(Box<PausedRun>),
    /// An event of a sub-agent's run (B1), under the call of the run that started it: a
    /// sub-agent's sub-agent's events come nested twice.
    SubAgent {
        /// The call that started the sub-agent's run.
        call_id: CallId,
        /// The sub-agent run's event.
        event: Box<RunEvent>,
    },
}

/// The events not yet yielded, and the waker of a stream waiting for one: a call's progress
/// (K3) is emitted from the call's task, outside the run's future, and must wake the stream.
#[derive(Default)]
struct Pending {
    events: VecDeque<RunEvent>,
    waker: Option<Waker>,
}

type Queue = Arc<Mutex<Pending>>;

/// A function that sees each event of a run as it happens ([`crate::RunRequest::on_event`]).
pub(crate) type Observer = Arc<dyn Fn(&RunEvent) + Send + Sync>;

/// Where the run loop puts events: nowhere for [`crate::Agent::run`], a queue for
/// [`crate::Agent::run_stream`], and to the request's observer when it has one. A sub-agent
/// run's sink puts its events in its parent's, each under the call that started the run
/// (B1).
#[derive(Clone, Default)]
pub(crate) struct Sink {
    queue: Option<Queue>,
    observer: Option<Observer>,
    /// The sink of the run whose call started this one, and that call's id.
    parent: Option<Arc<(CallId, Sink)>>,
}

impl Sink {
    /// A sink that drops every event (and never builds one).
    pub(crate) fn none() -> Self {
        Self::default()
    }

    fn queue(queue: Queue) -> Self {
        Self {
            queue: Some(queue),
            ..Self::default()
        }
    }

    /// The same sink, each event seen by `observer` too.
    pub(crate) fn observed(mut self, observer: Option<Observer>) -> Self {
        self.observer = observer;
        self
    }

    /// The sink of the sub-agent run that call `call_id` of `parent`'s run started (B1): its
    /// events reach `parent` as [`RunEvent::SubAgent`]; none when `parent` wants no events.
    pub(crate) fn under(parent: &Sink, call_id: CallId) -> Self {
        if !parent.is_active() {
            return Self::none();
        }
        Self {
            parent: Some(Arc::new((call_id, parent.clone()))),
            ..Self::default()
        }
    }

    /// Whether events are wanted.
    pub(crate) fn is_active(&self) -> bool {
        self.queue.is_some() || self.observer.is_some() || self.parent.is_some()
    }

    /// Emits the event `make` builds, if events are wanted.
    pub(crate) fn emit(&self, make: impl FnOnce() -> RunEvent) {
        if self.is_active() {
            self.push(make());
        }
    }

    /// Gives `event` to the observer and the queue, and a sub-agent run's event to its
    /// parent's sink, under the call that started the run (B1).
    fn push(&self, event: RunEvent) {
        if let Some(observer) = &self.observer {
            observer(&event);
        }
        if let Some(parent) = &self.parent {
            let (call_id, sink) = &**parent;
            sink.push(RunEvent::SubAgent {
                call_id: call_id.clone(),
                event: Box::new(event),
            });
            return;
        }
        if let Some(queue) = &self.queue {
            let waker = {
                let mut pending = queue.lock().unwrap_or_else(PoisonError::into_inner);
                pending.events.push_back(event);
                pending.waker.take()
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}

type RunFuture = Pin<Box<dyn Future<Output = Result<RunOutput, RunError>> + Send>>;

/// A run as a [`Stream`] of events (R4), made by [`crate::Agent::run_stream`].
///
/// It yields `Ok` events as the run makes progress, then either
/// `Ok(RunEvent::Finished(output))`, `Ok(RunEvent::Paused(paused))` (H2) or one
/// `Err(RunError)`, then ends. The run makes
/// progress only while the stream is polled, and it is the same engine as
/// [`crate::Agent::run`]'s: both give the same transcript for the same model replies.
///
/// # Cancel safety
///
/// Dropping the stream cancels the run: the model request in flight is dropped and so are
/// the calls in flight (each handler's future is dropped at its current await point).
#[must_use = "a run stream does nothing unless polled"]
pub struct RunStream {
    future: Option<RunFuture>,
    queue: Queue,
    last: Option<Result<RunEvent, RunError>>,
}

impl RunStream {
    pub(crate) fn new<F>(make: impl FnOnce(Sink) -> F) -> Self
    where
        F: Future<Output = Result<RunOutput, RunError>> + Send + 'static,
    {
        let queue = Queue::default();
        let future: RunFuture = Box::pin(make(Sink::queue(Arc::clone(&queue))));
        Self {
            future: Some(future),
            queue,
            last: None,
        }
    }

    /// The next event, or `None` once the run has ended (a convenience for
    /// `StreamExt::next`, without a dependency on `futures`).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future loses no event (the run itself pauses).
    pub async fn next(&mut self) -> Option<Result<RunEvent, RunError>> {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    /// The next event; and, when there is none and `waker` is given, the waker to wake when
    /// one comes (set under the same lock, so no event is missed).
    fn pop(&self, waker: Option<&Waker>) -> Option<RunEvent> {
        let mut pending = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let event = pending.events.pop_front();
        pending.waker = match (&event, waker) {
            (None, Some(waker)) => Some(waker.clone()),
            _ => None,
        };
        event
    }
}

impl Stream for RunStream {
    type Item = Result<RunEvent, RunError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        if let Some(event) = self.pop(None) {
            return Poll::Ready(Some(Ok(event)));
        }
        if let Some(future) = self.future.as_mut() {
            match future.as_mut().poll(cx) {
                Poll::Pending => {
                    return match self.pop(Some(cx.waker())) {
                        Some(event) => Poll::Ready(Some(Ok(event))),
                        None => Poll::Pending,
                    };
                }
                Poll::Ready(result) => {
                    self.future = None;
                    self.last = Some(match result {
                        Ok(output) => Ok(RunEvent::Finished(output)),
                        Err(e) => e
                            .into_paused()
                            .map(|paused| RunEvent::Paused(Box::new(paused))),
                    });
                    if let Some(event) = self.pop(None) {
                        return Poll::Ready(Some(Ok(event)));
                    }
                }
            }
        }
        Poll::Ready(self.last.take())
    }
}

impl std::fmt::Debug for RunStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunStream")
            .field("running", &self.future.is_some())
            .finish_non_exhaustive()
    }
}
