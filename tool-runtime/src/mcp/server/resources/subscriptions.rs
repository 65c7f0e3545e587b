//! Subscriptions to resources (M7): `resources/subscribe` and `resources/unsubscribe` of the
//! protocols before 2026-07-28, `notifications/resources/updated` when the application says
//! a resource changed ([`McpServer::resource_updated`](crate::mcp::McpServer::resource_updated)),
//! and the list-changed notifications to every session that listed resources or prompts.
//!
//! On 2026-07-28 the same notifications go to each open `subscriptions/listen` stream
//! (SEP-2575) whose acknowledged filter asked for them, through rmcp's [`SubscriptionSink`],
//! which keeps to that filter and tags each with the stream's subscription id; so does a tool
//! list change, to the streams of the one owner whose search loaded a tool (Q1).
//!
//! A stream keeps the context it was opened with, and a session's subscription the context of
//! the request that made it: each update of a resource is sent only if that context may still
//! read the resource, its policy and scopes checked again then (a permission revoked after the
//! subscription stops its updates, A4). One update costs one check per session or stream
//! subscribed to its resource, each within the time a send is given.
//!
//! Bounded: a session or a stream holds at most [`MAX_PER_SESSION`] subscriptions and the
//! server knows at most [`MAX_SESSIONS`] sessions and as many streams; a session whose
//! transport closed is forgotten at the next notification, a stream when it ends.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::join_all;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{SubscriptionSendError, SubscriptionSink};
use rmcp::{ErrorData, Peer, RoleServer};
use tool_core::Context;

use super::McpResource;
use crate::mcp::server::offer::offered;

/// The most subscriptions one session may hold.
pub(crate) const MAX_PER_SESSION: usize = 256;

/// The most sessions a server keeps for notifications.
pub(crate) const MAX_SESSIONS: usize = 10_000;
/// The most `subscriptions/listen` streams one owner (a session, or the holder of one
/// authorization) keeps open at once: one caller cannot take every stream the server keeps.
pub(crate) const MAX_STREAMS_PER_OWNER: usize = 64;
/// The most bytes of resource URIs one stream's filter keeps.
pub(crate) const MAX_URI_BYTES: usize = 64 * 1024;

/// Which list changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Changed {
    Resources,
    Prompts,
}

/// One session that may be notified.
struct Watcher {
    session: String,
    peer: Peer<RoleServer>,
    /// The resources it subscribed to, each with the context of the request that subscribed,
    /// on which each update is checked again.
    uris: Vec<(String, Arc<Context>)>,
}

/// One open `subscriptions/listen` stream (2026-07-28).
struct Listener {
    key: u64,
    /// Who opened it: the session, or the holder of the request's authorization; `None` for
    /// an anonymous caller, whom only the server's bound limits.
    owner: Option<String>,
    /// rmcp's sink of the stream: it sends only what the stream's filter accepted.
    sink: SubscriptionSink,
    /// The resources whose updates the stream gets: those of its filter the caller could
    /// read when it opened, and can read still when an update comes.
    uris: Vec<String>,
    /// The context the stream was opened with, on which each update is checked again.
    ctx: Arc<Context>,
}

/// The key of an open stream, to forget it when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListenerKey(u64);

/// The sessions and streams to notify, and the resources each subscribed to.
#[derive(Default)]
pub(crate) struct Subscriptions {
    watchers: Mutex<Vec<Watcher>>,
    listeners: Mutex<Vec<Listener>>,
    next_key: AtomicU64,
}

impl Subscriptions {
    fn with<T>(&self, f: impl FnOnce(&mut Vec<Watcher>) -> T) -> T {
        let mut watchers = self
            .watchers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut watchers)
    }

    fn with_listeners<T>(&self, f: impl FnOnce(&mut Vec<Listener>) -> T) -> T {
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut listeners)
    }

    /// Opens a `subscriptions/listen` stream of `owner`'s that sends through `sink`, with
    /// updates of `uris` (at most [`MAX_PER_SESSION`] kept) that `ctx` may read when they
    /// come; `None` when the server already holds [`MAX_SESSIONS`] streams, or a known
    /// `owner` [`MAX_STREAMS_PER_OWNER`].
    pub(crate) fn open(
        &self,
        owner: Option<String>,
        sink: SubscriptionSink,
        mut uris: Vec<String>,
        ctx: Context,
    ) -> Option<ListenerKey> {
        let ctx = Arc::new(ctx);
        uris.truncate(MAX_PER_SESSION);
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        self.with_listeners(|listeners| {
            let owned = (owner.as_ref()).map_or(0, |owner| {
                listeners
                    .iter()
                    .filter(|l| l.owner.as_ref() == Some(owner))
                    .count()
            });
            (listeners.len() < MAX_SESSIONS && owned < MAX_STREAMS_PER_OWNER).then(|| {
                listeners.push(Listener {
                    key,
                    owner,
                    sink,
                    uris,
                    ctx,
                });
                ListenerKey(key)
            })
        })
    }

    /// Forgets the stream `key` (it ended).
    pub(crate) fn close(&self, key: ListenerKey) {
        self.with_listeners(|listeners| listeners.retain(|l| l.key != key.0));
    }

    /// How many streams are open.
    pub(crate) fn streams(&self) -> usize {
        self.with_listeners(|listeners| listeners.len())
    }

    /// The sinks of the open streams `pick` chooses.
    fn sinks(&self, pick: impl Fn(&Listener) -> bool) -> Vec<SubscriptionSink> {
        self.with_listeners(|listeners| {
            (listeners.iter())
                .filter(|l| pick(l))
                .map(|l| l.sink.clone())
                .collect()
        })
    }

    /// Remembers `session` (it listed resources or prompts) to tell it when a list changes;
    /// past [`MAX_SESSIONS`] it is not remembered.
    pub(crate) fn listen(&self, session: &str, peer: &Peer<RoleServer>) {
        self.with(|watchers| {
            watchers.retain(|w| !w.peer.is_transport_closed());
            if !watchers.iter().any(|w| w.session == session) && watchers.len() < MAX_SESSIONS {
                watchers.push(Watcher {
                    session: session.to_owned(),
                    peer: peer.clone(),
                    uris: Vec::new(),
                });
            }
        });
    }

    /// Subscribes `session` to `uri`, its updates checked on `ctx` (the context of the request
    /// that subscribed; a subscription made again keeps the latest).
    pub(crate) fn subscribe(
        &self,
        session: &str,
        peer: &Peer<RoleServer>,
        uri: &str,
        ctx: Context,
    ) -> Result<(), ErrorData> {
        self.listen(session, peer);
        self.with(|watchers| {
            let Some(watcher) = watchers.iter_mut().find(|w| w.session == session) else {
                return Err(ErrorData::internal_error(
                    "the server holds too many sessions to subscribe another",
                    None,
                ));
            };
            if let Some((_, held)) = watcher.uris.iter_mut().find(|(held, _)| held == uri) {
                *held = Arc::new(ctx);
                return Ok(());
            }
            if watcher.uris.len() >= MAX_PER_SESSION {
                return Err(ErrorData::invalid_params(
                    format!("a session holds at most {MAX_PER_SESSION} subscriptions"),
                    None,
                ));
            }
            watcher.uris.push((uri.to_owned(), Arc::new(ctx)));
            Ok(())
        })
    }

    /// Unsubscribes `session` from `uri` (nothing when it was not subscribed).
    pub(crate) fn unsubscribe(&self, session: &str, uri: &str) {
        self.with(|watchers| {
            if let Some(watcher) = watchers.iter_mut().find(|w| w.session == session) {
                watcher.uris.retain(|(held, _)| held != uri);
            }
        });
    }

    /// How many sessions are subscribed to `uri`.
    pub(crate) fn subscribers(&self, uri: &str) -> usize {
        let sessions = self.with(|watchers| {
            (watchers.iter())
                .filter(|w| w.uris.iter().any(|(held, _)| held == uri))
                .count()
        });
        sessions + self.sinks(|l| l.uris.iter().any(|held| held == uri)).len()
    }

    /// Sends `notifications/resources/updated` for `uri` (served by `resource`) to each
    /// session and stream subscribed to it, each only if the context it subscribed with may
    /// read `resource` now; how many were sent.
    pub(crate) async fn updated(&self, uri: &str, resource: Option<&McpResource>) -> usize {
        let peers = self.with(|watchers| {
            watchers.retain(|w| !w.peer.is_transport_closed());
            (watchers.iter())
                .filter_map(|w| {
                    let (_, ctx) = w.uris.iter().find(|(held, _)| held == uri)?;
                    Some((w.peer.clone(), Arc::clone(ctx)))
                })
                .collect::<Vec<_>>()
        });
        // A4: checked again for this update, within the time its send is given.
        let to_sessions = peers.into_iter().map(|(peer, ctx)| async move {
            let param = ResourceUpdatedNotificationParam::new(uri);
            readable(resource, &ctx).await && peer.notify_resource_updated(param).await.is_ok()
        });
        let streams = self.with_listeners(|listeners| {
            (listeners.iter())
                .filter(|l| l.uris.iter().any(|held| held == uri))
                .map(|l| (l.sink.clone(), Arc::clone(&l.ctx)))
                .collect::<Vec<_>>()
        });
        let to_streams = streams.into_iter().map(|(sink, ctx)| async move {
            readable(resource, &ctx).await && delivered(sink.notify_resource_updated(uri).await)
        });
        all_within(to_sessions).await + all_within(to_streams).await
    }

    /// Sends the list-changed notification of `changed` to every session known and every
    /// stream that asked for it; how many were sent.
    pub(crate) async fn list_changed(&self, changed: Changed) -> usize {
        let peers: Vec<Peer<RoleServer>> = self.with(|watchers| {
            watchers.retain(|w| !w.peer.is_transport_closed());
            watchers.iter().map(|w| w.peer.clone()).collect()
        });
        let to_sessions = peers.into_iter().map(|peer| async move {
            let result = match changed {
                Changed::Resources => peer.notify_resource_list_changed().await,
                Changed::Prompts => peer.notify_prompt_list_changed().await,
            };
            result.is_ok()
        });
        let asked = |l: &Listener| {
            let accepted = l.sink.accepted();
            match changed {
                Changed::Resources => accepted.resources_list_changed == Some(true),
                Changed::Prompts => accepted.prompts_list_changed == Some(true),
            }
        };
        let to_streams = self.sinks(asked).into_iter().map(|sink| async move {
            let result = match changed {
                Changed::Resources => sink.notify_resource_list_changed().await,
                Changed::Prompts => sink.notify_prompt_list_changed().await,
            };
            delivered(result)
        });
        all_within(to_sessions).await + all_within(to_streams).await
    }

    /// Sends `notifications/tools/list_changed` to each stream of `owner`'s that asked for it
    /// (`None`: the anonymous callers', who share what their searches load): a search of the
    /// owner's loaded a deferred tool, which changed that owner's list and no one else's
    /// (Q1). How many were sent.
    pub(crate) async fn tools_changed(&self, owner: Option<&str>) -> usize {
        let asked = |l: &Listener| {
            l.owner.as_deref() == owner && l.sink.accepted().tools_list_changed == Some(true)
        };
        let sends = (self.sinks(asked).into_iter())
            .map(|sink| async move { delivered(sink.notify_tool_list_changed().await) });
        all_within(sends).await
    }
}

/// How long one notification may wait on its client: a client that stops reading its stream
/// or session delays nobody else's notifications longer than this.
const SEND_WITHIN: Duration = Duration::from_secs(5);

/// Runs `sends` at once, each given up after [`SEND_WITHIN`]; how many went out.
async fn all_within<F: Future<Output = bool>>(sends: impl IntoIterator<Item = F>) -> usize {
    let timed = sends.into_iter().map(|send| async move {
        tokio::time::timeout(SEND_WITHIN, send)
            .await
            .unwrap_or(false)
    });
    (join_all(timed).await.into_iter())
        .filter(|sent| *sent)
        .count()
}

/// Whether the caller behind `ctx` may read `resource` now: its scopes and its policy (A4); a
/// policy that fails lets nothing through, and is logged.
async fn readable(resource: Option<&McpResource>, ctx: &Context) -> bool {
    let Some(resource) = resource else {
        return false;
    };
    match offered(resource.policy(), resource.scopes(), ctx).await {
        Ok(readable) => readable,
        Err(error) => {
            tracing::error!(
                error = %error,
                "an availability policy failed while a resource update was checked; the \
                 update is not sent"
            );
            false
        }
    }
}

/// Whether a stream's notification went out; a stream that ended meanwhile is no failure
/// (it is forgotten when its request ends), anything else is logged.
fn delivered(result: Result<(), SubscriptionSendError>) -> bool {
    match result {
        Ok(()) => true,
        Err(SubscriptionSendError::SubscriptionClosed) => false,
        Err(error) => {
            tracing::debug!(error = %error, "a subscriptions/listen notification was not sent");
            false
        }
    }
}
