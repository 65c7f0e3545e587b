//! The progress a call's handler reports (K3), sent to the client as
//! `notifications/progress` when its `tools/call` carried a progress token
//! (`params._meta.progressToken`). Without a token nobody listens, and the handler's reports
//! cost nothing.
//!
//! Reports go through a channel to a task that sends them in order; before the server
//! answers the call, [`Relay::finish`] waits until every report made so far is sent, so the
//! client sees them before the result (a client drops progress that arrives after it).

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken, RequestMetaObject};
use rmcp::service::{Peer, RequestContext};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tool_core::{Context, Progress};

/// How long an answer waits for the progress before it to be sent.
const FLUSH_LIMIT: Duration = Duration::from_secs(5);

enum Message {
    Report(Progress),
    Flush(oneshot::Sender<()>),
}

/// The progress relay of one call: inert when the client gave no progress token.
pub(crate) struct Relay {
    running: Option<(mpsc::UnboundedSender<Message>, JoinHandle<()>)>,
}

/// `ctx`, the call's context, with its progress relayed to the client when the call's
/// `_meta` (`meta`, or its request context's) carries a progress token.
pub(crate) fn relay(
    ctx: Context,
    meta: Option<&RequestMetaObject>,
    cx: &RequestContext<RoleServer>,
) -> (Context, Relay) {
    let token = meta
        .and_then(|meta| meta.get_progress_token())
        .or_else(|| cx.meta.get_progress_token());
    let Some(token) = token else {
        return (ctx, Relay { running: None });
    };
    let (sender, receiver) = mpsc::unbounded_channel();
    let task = tokio::spawn(forward(receiver, cx.peer.clone(), token));
    let reports = sender.clone();
    let ctx = ctx.with_progress(move |progress| {
        // After the answer the relay is gone: a late report has nowhere to go.
        let _ = reports.send(Message::Report(progress));
    });
    (
        ctx,
        Relay {
            running: Some((sender, task)),
        },
    )
}

impl Relay {
    /// The relay of a call whose client gave no progress token.
    pub(crate) fn inert() -> Self {
        Self { running: None }
    }

    /// Waits (at most [`FLUSH_LIMIT`]) until every report made so far is sent, then stops
    /// relaying.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future stops relaying; reports not sent yet are lost.
    pub(crate) async fn finish(self) {
        let Some((sender, task)) = self.running else {
            return;
        };
        let (done, flushed) = oneshot::channel();
        if sender.send(Message::Flush(done)).is_ok()
            && tokio::time::timeout(FLUSH_LIMIT, flushed).await.is_err()
        {
            tracing::debug!("progress notifications were still unsent when the call was answered");
        }
        task.abort();
    }
}

/// Sends each report as `notifications/progress`, in order, until a flush. The MCP
/// specification wants progress to increase with every notification: a report that does not
/// is not sent.
async fn forward(
    mut receiver: mpsc::UnboundedReceiver<Message>,
    peer: Peer<RoleServer>,
    token: ProgressToken,
) {
    let mut last: Option<f64> = None;
    while let Some(message) = receiver.recv().await {
        let progress = match message {
            Message::Report(progress) => progress,
            Message::Flush(done) => {
                let _ = done.send(());
                return;
            }
        };
        if last.is_some_and(|last| progress.done <= last) {
            tracing::debug!(
                done = progress.done,
                "a progress report that does not increase was not sent"
            );
            continue;
        }
        last = Some(progress.done);
        let mut notification = ProgressNotificationParam::new(token.clone(), progress.done);
        notification.total = progress.total;
        notification.message = progress.message;
        if let Err(error) = peer.notify_progress(notification).await {
            tracing::debug!(%error, "a progress notification could not be sent");
        }
    }
}
