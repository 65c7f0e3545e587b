//! A handler's log messages (M8, `Context::log`), sent to the client as
//! `notifications/message` when it asked for their level: by `logging/setLevel` for its
//! session (protocols before 2026-07-28; `info` until it asks), or in the request's own
//! `_meta` (`io.modelcontextprotocol/logLevel`, 2026-07-28, where a request that names no
//! level gets no messages).
//!
//! As progress (`progress`), messages go through a channel to a task that sends them in
//! order (started by a call's first message), and the answer waits until every message made
//! before it is sent.
//!
//! rmcp marks MCP logging deprecated (SEP-2577 moves it to the per-request level of
//! 2026-07-28); its types are used here, where the protocols that still have it are served.
#![allow(deprecated)]

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, ProtocolVersion};
use rmcp::service::{Peer, RequestContext};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tool_core::{Context, LogLevel, LogMessage};

/// How long an answer waits for the messages before it to be sent.
const FLUSH_LIMIT: Duration = Duration::from_secs(5);

/// The level a session's client asked for before 2026-07-28, until it asks.
const SESSION_DEFAULT: LogLevel = LogLevel::Info;

/// The level a session's client set with `logging/setLevel`, shared by its requests.
#[derive(Clone, Default)]
pub(crate) struct SessionLevel(Arc<Mutex<Option<LogLevel>>>);

impl SessionLevel {
    /// Sets the level the client asked for.
    pub(crate) fn set(&self, level: LoggingLevel) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(level_of(level));
    }

    fn get(&self) -> LogLevel {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .unwrap_or(SESSION_DEFAULT)
    }
}

enum Message {
    Log(LogMessage),
    Flush(oneshot::Sender<()>),
}

/// The task that sends one call's messages, started by its first message: a call that logs
/// nothing costs no task.
struct Sender {
    peer: Peer<RoleServer>,
    runtime: tokio::runtime::Handle,
    running: OnceLock<(mpsc::UnboundedSender<Message>, JoinHandle<()>)>,
}

impl Sender {
    fn send(&self, message: Message) -> bool {
        let (sender, _) = self.running.get_or_init(|| {
            let (sender, receiver) = mpsc::unbounded_channel();
            let task = self.runtime.spawn(forward(receiver, self.peer.clone()));
            (sender, task)
        });
        sender.send(message).is_ok()
    }
}

/// The log relay of one call: inert when the client gets no messages.
pub(crate) struct Relay {
    sender: Option<Arc<Sender>>,
}

/// `ctx`, the call's context, with its log messages at or above the level the client asked
/// for relayed to it. `requested` is the level the request names in its `_meta`.
pub(crate) fn relay(
    ctx: Context,
    requested: Option<LoggingLevel>,
    session: &SessionLevel,
    cx: &RequestContext<RoleServer>,
) -> (Context, Relay) {
    let per_request = cx
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
    let least = match (per_request, requested) {
        (true, None) => return (ctx, Relay::inert()),
        (true, Some(level)) => level_of(level),
        (false, _) => session.get(),
    };
    let sender = Arc::new(Sender {
        peer: cx.peer.clone(),
        runtime: tokio::runtime::Handle::current(),
        running: OnceLock::new(),
    });
    let messages = Arc::clone(&sender);
    let ctx = ctx.with_log_sink(move |message| {
        if message.level >= least {
            // After the answer the relay is gone: a late message has nowhere to go.
            let _ = messages.send(Message::Log(message));
        }
    });
    (
        ctx,
        Relay {
            sender: Some(sender),
        },
    )
}

impl Relay {
    /// The relay of a call whose client gets no messages.
    pub(crate) fn inert() -> Self {
        Self { sender: None }
    }

    /// Waits (at most [`FLUSH_LIMIT`]) until every message made so far is sent, then stops
    /// relaying.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future stops relaying; messages not sent yet are lost.
    pub(crate) async fn finish(self) {
        let Some(sender) = self.sender else {
            return;
        };
        let Some((_, task)) = sender.running.get() else {
            return;
        };
        let (done, flushed) = oneshot::channel();
        if sender.send(Message::Flush(done))
            && tokio::time::timeout(FLUSH_LIMIT, flushed).await.is_err()
        {
            tracing::debug!("log messages were still unsent when the call was answered");
        }
        task.abort();
    }
}

/// Sends each message as `notifications/message`, in order, until a flush.
async fn forward(mut receiver: mpsc::UnboundedReceiver<Message>, peer: Peer<RoleServer>) {
    while let Some(message) = receiver.recv().await {
        let message = match message {
            Message::Log(message) => message,
            Message::Flush(done) => {
                let _ = done.send(());
                return;
            }
        };
        let mut notification =
            LoggingMessageNotificationParam::new(wire_level(message.level), message.data);
        notification.logger = message.logger;
        if let Err(error) = peer.notify_logging_message(notification).await {
            tracing::debug!(%error, "a log message could not be sent");
        }
    }
}

fn level_of(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

fn wire_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}
