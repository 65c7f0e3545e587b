//! Subscriptions to resources (M7): `resources/subscribe` and `resources/unsubscribe` of the
//! protocols before 2026-07-28, `notifications/resources/updated` when the application says
//! a resource changed ([`McpServer::resource_updated`](crate::mcp::McpServer::resource_updated)),
//! and the list-changed notifications to every session that listed resources or prompts.
//!
//! Bounded: a session holds at most [`MAX_PER_SESSION`] subscriptions and the server knows at
//! most [`MAX_SESSIONS`] sessions; a session whose transport closed is forgotten at the next
//! notification.

use std::sync::Mutex;

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::{ErrorData, Peer, RoleServer};

/// The most subscriptions one session may hold.
pub(crate) const MAX_PER_SESSION: usize = 256;

/// The most sessions a server keeps for notifications.
pub(crate) const MAX_SESSIONS: usize = 10_000;

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
    uris: Vec<String>,
}

/// The sessions to notify, and the resources each subscribed to.
#[derive(Default)]
pub(crate) struct Subscriptions {
    watchers: Mutex<Vec<Watcher>>,
}

impl Subscriptions {
    fn with<T>(&self, f: impl FnOnce(&mut Vec<Watcher>) -> T) -> T {
        let mut watchers = self
            .watchers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut watchers)
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

    /// Subscribes `session` to `uri`.
    pub(crate) fn subscribe(
        &self,
        session: &str,
        peer: &Peer<RoleServer>,
        uri: &str,
    ) -> Result<(), ErrorData> {
        self.listen(session, peer);
        self.with(|watchers| {
            let Some(watcher) = watchers.iter_mut().find(|w| w.session == session) else {
                return Err(ErrorData::internal_error(
                    "the server holds too many sessions to subscribe another",
                    None,
                ));
            };
            if watcher.uris.iter().any(|held| held == uri) {
                return Ok(());
            }
            if watcher.uris.len() >= MAX_PER_SESSION {
                return Err(ErrorData::invalid_params(
                    format!("a session holds at most {MAX_PER_SESSION} subscriptions"),
                    None,
                ));
            }
            watcher.uris.push(uri.to_owned());
            Ok(())
        })
    }

    /// Unsubscribes `session` from `uri` (nothing when it was not subscribed).
    pub(crate) fn unsubscribe(&self, session: &str, uri: &str) {
        self.with(|watchers| {
            if let Some(watcher) = watchers.iter_mut().find(|w| w.session == session) {
                watcher.uris.retain(|held| held != uri);
            }
        });
    }

    /// How many sessions are subscribed to `uri`.
    pub(crate) fn subscribers(&self, uri: &str) -> usize {
        self.with(|watchers| {
            (watchers.iter())
                .filter(|w| w.uris.iter().any(|held| held == uri))
                .count()
        })
    }

    /// Sends `notifications/resources/updated` for `uri` to each session subscribed to it;
    /// how many were sent.
    pub(crate) async fn updated(&self, uri: &str) -> usize {
        let peers: Vec<Peer<RoleServer>> = self.with(|watchers| {
            watchers.retain(|w| !w.peer.is_transport_closed());
            (watchers.iter())
                .filter(|w| w.uris.iter().any(|held| held == uri))
                .map(|w| w.peer.clone())
                .collect()
        });
        let mut sent = 0;
        for peer in peers {
            let param = ResourceUpdatedNotificationParam::new(uri);
            if peer.notify_resource_updated(param).await.is_ok() {
                sent += 1;
            }
        }
        sent
    }

    /// Sends the list-changed notification of `changed` to every session known; how many
    /// were sent.
    pub(crate) async fn list_changed(&self, changed: Changed) -> usize {
        let peers: Vec<Peer<RoleServer>> = self.with(|watchers| {
            watchers.retain(|w| !w.peer.is_transport_closed());
            watchers.iter().map(|w| w.peer.clone()).collect()
        });
        let mut sent = 0;
        for peer in peers {
            let result = match changed {
                Changed::Resources => peer.notify_resource_list_changed().await,
                Changed::Prompts => peer.notify_prompt_list_changed().await,
            };
            sent += usize::from(result.is_ok());
        }
        sent
    }
}
