//! T5: the bounds on live sessions. [`Bounded`] is rmcp's in-memory session manager with a
//! [`Ledger`] of who holds each session: a session is counted from its creation until rmcp
//! closes it (a `DELETE`, its idle timeout, the server's shutdown, a failed handshake).
//!
//! rmcp creates a session only while it answers an `initialize`, after reading the body; the
//! guard in front of it runs each request that could open one inside [`admit`], which tells
//! [`Bounded::create_session`] whom to count it against, and tells the guard afterwards
//! whether a bound refused it (rmcp then answers `500`, and logs an error, which the guard
//! replaces). A principal already at a bound is refused by the guard itself
//! ([`Ledger::full_for`]), without rmcp: only two requests racing for the last slot take the
//! way through rmcp.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, ServerSseMessage, SessionId, SessionManager,
};

use super::principal::Owner;

/// The bound a new session would break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bound {
    /// Its principal holds [`Limits::per_principal`] sessions.
    PerPrincipal,
    /// The server holds [`Limits::total`] sessions.
    Total,
}

/// The bounds on live sessions.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// Live sessions in all.
    pub(super) total: usize,
    /// Live sessions of one principal.
    pub(super) per_principal: usize,
}

/// Who holds the live sessions.
#[derive(Debug, Default)]
struct Held {
    total: usize,
    by_owner: HashMap<Owner, usize>,
    owners: HashMap<SessionId, Owner>,
}

/// The live sessions, counted against their owners and [`Limits`].
#[derive(Debug)]
pub(super) struct Ledger {
    limits: Limits,
    held: Mutex<Held>,
}

impl Ledger {
    pub(super) fn new(limits: Limits) -> Self {
        Self {
            limits,
            held: Mutex::new(Held::default()),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        // The counts stay consistent under a panic elsewhere: each change is one statement.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The bound one more session of `owner` would break, if any (the principal's first).
    fn bound_for(&self, held: &Held, owner: &Owner) -> Option<Bound> {
        let of_owner = held.by_owner.get(owner).copied().unwrap_or(0);
        if of_owner >= self.limits.per_principal {
            Some(Bound::PerPrincipal)
        } else if held.total >= self.limits.total {
            Some(Bound::Total)
        } else {
            None
        }
    }

    /// The bound one more session of `owner` would break now, if any.
    pub(super) fn full_for(&self, owner: &Owner) -> Option<Bound> {
        self.bound_for(&self.held(), owner)
    }

    /// Counts one more session of `owner`, or says which bound it would break.
    fn reserve(&self, owner: &Owner) -> Result<(), Bound> {
        let mut held = self.held();
        if let Some(bound) = self.bound_for(&held, owner) {
            return Err(bound);
        }
        held.total += 1;
        *held.by_owner.entry(owner.clone()).or_insert(0) += 1;
        Ok(())
    }

    /// Gives back a reservation of `owner` that made no session.
    fn unreserve(&self, owner: &Owner) {
        let mut held = self.held();
        held.total = held.total.saturating_sub(1);
        if let Some(count) = held.by_owner.get_mut(owner) {
            *count -= 1;
            if *count == 0 {
                held.by_owner.remove(owner);
            }
        }
    }

    /// Records that the reservation of `owner` became the session `id`.
    fn bind(&self, id: SessionId, owner: Owner) {
        self.held().owners.insert(id, owner);
    }

    /// Frees the slot of the session `id`; nothing when it was freed already.
    fn release(&self, id: &SessionId) {
        let owner = self.held().owners.remove(id);
        if let Some(owner) = owner {
            self.unreserve(&owner);
        }
    }

    /// How many sessions are live.
    pub(super) fn live(&self) -> usize {
        self.held().total
    }
}

/// A request that may open a session: whom it is counted against, and the bound that refused
/// it, if one did.
#[derive(Debug)]
struct Admission {
    owner: Owner,
    refused: OnceLock<Bound>,
}

tokio::task_local! {
    /// The admission of the request being served, set by [`admit`].
    static ADMISSION: Arc<Admission>;
}

/// Serves `serve` (a request that may open a session) as `owner`'s: a session it opens is
/// counted against `owner`. Returns its response, and the bound that kept it from opening
/// one, if any.
pub(super) async fn admit<F: Future>(owner: Owner, serve: F) -> (F::Output, Option<Bound>) {
    let admission = Arc::new(Admission {
        owner,
        refused: OnceLock::new(),
    });
    let output = ADMISSION.scope(Arc::clone(&admission), serve).await;
    (output, admission.refused.get().copied())
}

/// Why [`Bounded`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(super) enum SessionsError {
    /// A bound keeps the session from being created.
    #[error("no new MCP session: {0:?} bound reached")]
    Full(Bound),
    /// rmcp's session manager failed.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// rmcp's in-memory session manager, whose sessions are counted in a [`Ledger`].
#[derive(Debug)]
pub(super) struct Bounded {
    local: LocalSessionManager,
    ledger: Arc<Ledger>,
}

impl Bounded {
    /// Sessions counted in `ledger`, each closed after `idle` without activity.
    pub(super) fn new(ledger: Arc<Ledger>, idle: Duration) -> Self {
        let mut local = LocalSessionManager::default();
        local.session_config.keep_alive = Some(idle);
        Self { local, ledger }
    }
}

impl SessionManager for Bounded {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let admission = ADMISSION.try_with(Arc::clone).ok();
        let owner = admission
            .as_ref()
            .map_or(Owner::Unknown, |admission| admission.owner.clone());
        if let Err(bound) = self.ledger.reserve(&owner) {
            if let Some(admission) = &admission {
                let _ = admission.refused.set(bound);
            }
            return Err(SessionsError::Full(bound));
        }
        match self.local.create_session().await {
            Ok((id, transport)) => {
                self.ledger.bind(id.clone(), owner);
                Ok((id, transport))
            }
            Err(error) => {
                self.ledger.unreserve(&owner);
                Err(error.into())
            }
        }
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.local.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.local.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // rmcp removes the session before it waits for its worker: the slot is free either way.
        let closed = self.local.close_session(id).await;
        self.ledger.release(id);
        Ok(closed?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.local.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.local.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.local.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.local.resume(id, last_event_id).await?)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.local.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(name: &str) -> Owner {
        Owner::Named(name.into())
    }

    /// T5: a principal past its bound is refused before the server is, and a freed slot is
    /// free again, once.
    #[test]
    fn t5_the_ledger_counts_each_principal_and_all_and_frees_each_slot_once() {
        let ledger = Ledger::new(Limits {
            total: 3,
            per_principal: 2,
        });
        assert_eq!(ledger.reserve(&owner("a")), Ok(()));
        ledger.bind("s1".into(), owner("a"));
        assert_eq!(ledger.reserve(&owner("a")), Ok(()));
        ledger.bind("s2".into(), owner("a"));
        assert_eq!(ledger.reserve(&owner("a")), Err(Bound::PerPrincipal));
        assert_eq!(ledger.full_for(&owner("a")), Some(Bound::PerPrincipal));
        assert_eq!(ledger.full_for(&owner("b")), None);
        assert_eq!(ledger.reserve(&owner("b")), Ok(()));
        ledger.bind("s3".into(), owner("b"));
        assert_eq!(ledger.reserve(&owner("c")), Err(Bound::Total));
        assert_eq!(ledger.full_for(&owner("c")), Some(Bound::Total));
        assert_eq!(ledger.full_for(&owner("a")), Some(Bound::PerPrincipal));
        assert_eq!(ledger.live(), 3);
        ledger.release(&"s1".into());
        ledger.release(&"s1".into());
        assert_eq!(ledger.live(), 2);
        assert_eq!(ledger.reserve(&owner("c")), Ok(()));
        ledger.unreserve(&owner("c"));
        assert_eq!(ledger.reserve(&owner("a")), Ok(()));
        assert_eq!(ledger.live(), 3);
        ledger.release(&"s2".into());
        ledger.release(&"s3".into());
        assert_eq!(ledger.live(), 1);
        assert!(!ledger.held().by_owner.contains_key(&owner("b")));
    }

    /// T5: a session past a bound is not created, and the request's admission says which
    /// bound refused it; a closed session frees its slot.
    #[tokio::test]
    async fn t5_no_session_is_created_past_a_bound_and_a_closed_one_frees_its_slot() {
        let ledger = Arc::new(Ledger::new(Limits {
            total: 2,
            per_principal: 1,
        }));
        let sessions = Bounded::new(Arc::clone(&ledger), Duration::from_secs(60));
        let (first, refused) = admit(owner("a"), sessions.create_session()).await;
        let (id, _transport) = first.expect("a first session");
        assert_eq!(refused, None);
        let (second, refused) = admit(owner("a"), sessions.create_session()).await;
        assert!(matches!(
            second,
            Err(SessionsError::Full(Bound::PerPrincipal))
        ));
        assert_eq!(refused, Some(Bound::PerPrincipal));
        let (_, refused) = admit(owner("b"), sessions.create_session()).await;
        assert_eq!(refused, None);
        let (_, refused) = admit(owner("c"), sessions.create_session()).await;
        assert_eq!(refused, Some(Bound::Total));
        assert_eq!(sessions.local.sessions.read().await.len(), 2);
        assert_eq!(ledger.live(), 2);
        sessions.close_session(&id).await.expect("closed");
        assert_eq!(ledger.live(), 1);
        assert!(!sessions.has_session(&id).await.expect("known or not"));
        let (again, refused) = admit(owner("a"), sessions.create_session()).await;
        assert!(again.is_ok() && refused.is_none());
    }
}
