//! A sub-agent's steps in its parent's journal (B2, W1).
//!
//! In a durable run, the call of a sub-agent tool is not one step of the parent's journal: a
//! step cannot hold steps, and the sub-agent's model requests and tool calls must each be
//! recorded as they are taken, or a process killed mid-child would take them all again. The
//! call runs outside a step instead, its context holding a [`ParentSteps`] port; the
//! sub-agent's run takes its journal from that port ([`InParent`]), whose steps are the
//! parent's, named under the call ([`StepKind::Nested`]), in the order the child takes them;
//! the parent serves them on its journal while the call runs ([`Asks::serve`]), then records
//! the call's outcome as the call's own step. A replay runs the call again: its child's steps
//! answer from the journal, so nothing the child did runs twice.
//!
//! The port carries plain data ('static: step names and JSON results, never the step's
//! future): the child runs its step's work itself when the parent's journal asks for it, and
//! the parent's journal hears its result through a channel, or answers the recorded result
//! without asking.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::agent::journal::{Journal, JournalError, Retry, Step, StepKind};
use crate::agent::pause::BoxFuture;
use crate::model::ToolCall;

/// The context value through which a sub-agent's run finds its parent's journal: `None` in
/// the sub-agent run's own calls (a port belongs to one call).
#[derive(Clone)]
pub(crate) struct ParentSteps(pub(crate) Option<InParent>);

/// One step the child asks its parent's journal to take.
struct Ask {
    kind: StepKind,
    /// Told when the parent's journal runs the step (not when it answers a recorded result).
    go: oneshot::Sender<()>,
    /// The step's result, once the child ran its work.
    result: oneshot::Receiver<Result<Value, Retry>>,
    /// What the parent's journal answered.
    reply: oneshot::Sender<Result<Value, JournalError>>,
}

/// The journal of a sub-agent's run in a durable parent: each step one of the parent's,
/// named under the call that started the run.
#[derive(Clone)]
pub(crate) struct InParent {
    asks: mpsc::UnboundedSender<Ask>,
    /// `{parent's run id}/{call id}`: the same on every replay, so the child's calls keep their
    /// idempotency keys (W2).
    run_id: Arc<str>,
    id: Arc<str>,
    tool: Arc<str>,
}

/// The parent's end of a port: the steps its sub-agent asks for.
pub(crate) struct Asks {
    asks: mpsc::UnboundedReceiver<Ask>,
    /// The first failure the parent's journal answered a step with, if one did.
    failed: Mutex<Option<JournalError>>,
}

/// A port for the sub-agent run that `call` of the run `run_id` starts.
pub(crate) fn port(run_id: &str, call: &ToolCall) -> (InParent, Asks) {
    let (send, receive) = mpsc::unbounded_channel();
    let child = InParent {
        asks: send,
        run_id: format!("{run_id}/{}", call.id).into(),
        id: call.id.to_string().into(),
        tool: call.name.to_string().into(),
    };
    let asks = Asks {
        asks: receive,
        failed: Mutex::new(None),
    };
    (child, asks)
}

impl Asks {
    /// Takes the child's steps on `journal`, one at a time in the order asked, until the
    /// child can ask no more (its port dropped with the call's context).
    pub(crate) async fn serve(&mut self, journal: &dyn Journal) {
        while let Some(Ask {
            kind,
            go,
            result,
            reply,
        }) = self.asks.recv().await
        {
            let work = async move {
                // The child runs the work when told, and gives its result back.
                let _ = go.send(());
                result.await.unwrap_or_else(|_| {
                    Err(Retry::new("the sub-agent's run ended before its step did"))
                })
            };
            let answered = journal.step(Step::new(kind, Box::pin(work))).await;
            if let Err(error) = &answered {
                let mut failed = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
                failed.get_or_insert_with(|| error.clone());
            }
            let _ = reply.send(answered);
        }
    }

    /// The first failure the parent's journal answered a child's step with: the call's
    /// outcome is not recorded then, and the parent's run ends as its journal failed.
    pub(crate) fn failed(&self) -> Option<JournalError> {
        self.failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Journal for InParent {
    fn run_id(&self) -> &str {
        &self.run_id
    }

    fn step<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Result<Value, JournalError>> {
        Box::pin(async move {
            let kind = StepKind::Nested {
                id: self.id.to_string(),
                tool: self.tool.to_string(),
                inner: Box::new(step.kind().clone()),
            };
            let name = kind.to_string();
            let gone = || JournalError::new(name.clone(), "the parent's run takes no more steps");
            let (go, told) = oneshot::channel();
            let (give, result) = oneshot::channel();
            let (reply, mut replied) = oneshot::channel();
            let ask = Ask {
                kind,
                go,
                result,
                reply,
            };
            self.asks.send(ask).map_err(|_| gone())?;
            tokio::select! {
                biased;
                answered = &mut replied => return answered.map_err(|_| gone())?,
                told = told => {
                    if told.is_ok() {
                        let _ = give.send(step.into_future().await);
                    }
                }
            }
            replied.await.map_err(|_| gone())?
        })
    }
}
