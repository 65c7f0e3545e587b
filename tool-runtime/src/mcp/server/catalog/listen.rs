//! `subscriptions/listen` (protocol 2026-07-28, SEP-2575): the stream a client opens to hear
//! of changes, in place of the session-long notifications and `resources/subscribe` of the
//! protocols before it (M7).
//!
//! rmcp reads the request, asks [`accepted`] which notifications the server agrees to send,
//! narrows that to the capabilities the server declared, and sends the acknowledgement
//! (`notifications/subscriptions/acknowledged`, the stream's first message); [`serve`] then
//! keeps the stream open in the server's [`Subscriptions`](super::super::resources::subscriptions::Subscriptions)
//! until the client closes it. Each notification on it carries the stream's subscription id
//! and is one the client asked for: rmcp's sink refuses any other. A tool list change goes
//! only to the streams of the owner whose search loaded a deferred tool (Q1).

use rmcp::ErrorData;
use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;

use crate::mcp::server::resources::serve::MAX_URI_LEN;
use crate::mcp::server::resources::subscriptions::{
    ListenerKey, MAX_PER_SESSION, MAX_URI_BYTES, Subscriptions,
};
use crate::mcp::server::session::{ANYONE, Session};

/// What the server agrees to send of what a stream `requested`: the list changes of its
/// resources and prompts, of its tools when they can change (`tools_change`: a search can
/// load a deferred tool, Q1), and updates of at most [`MAX_PER_SESSION`] resources, each URI
/// at most [`MAX_URI_LEN`] bytes and [`MAX_URI_BYTES`] in all, duplicates once.
///
/// A URI is acknowledged whether or not it names a resource the caller may read: saying
/// which do would tell of a resource hidden from the caller (A5); only those it may read are
/// ever notified ([`serve`]).
pub(crate) fn accepted(requested: &SubscriptionFilter, tools_change: bool) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::new();
    accepted.tools_list_changed = requested
        .tools_list_changed
        .filter(|asked| *asked && tools_change);
    accepted.prompts_list_changed = requested.prompts_list_changed.filter(|asked| *asked);
    accepted.resources_list_changed = requested.resources_list_changed.filter(|asked| *asked);
    accepted.resource_subscriptions = (requested.resource_subscriptions.as_ref())
        .map(|uris| {
            let mut kept: Vec<String> = Vec::new();
            let mut bytes = 0;
            for uri in uris {
                if uri.is_empty() || uri.len() > MAX_URI_LEN || kept.contains(uri) {
                    continue;
                }
                if kept.len() == MAX_PER_SESSION || bytes + uri.len() > MAX_URI_BYTES {
                    break;
                }
                bytes += uri.len();
                kept.push(uri.clone());
            }
            kept
        })
        .filter(|kept| !kept.is_empty());
    accepted
}

/// Serves one acknowledged stream until the client closes it (or cancels its request): its
/// resource updates are those of the acknowledged URIs that name a resource the caller may
/// read now, and still may when the update comes (checked then, on this request's context);
/// its list changes those it asked for.
///
/// # Errors
///
/// The request's context cannot be built, a resource's policy fails, or the server already
/// holds as many streams as it keeps: the stream ends with that error.
///
/// # Cancel safety
///
/// Dropping the future forgets the stream.
pub(crate) async fn serve(
    session: &Session,
    subscription: SubscriptionContext,
) -> Result<(), ErrorData> {
    let cx = subscription.request_context();
    let parts = cx.extensions.get::<http::request::Parts>();
    let ctx = session.request_context(parts).await?;
    let catalog = &session.shared.catalog;
    let mut readable = Vec::new();
    let uris = subscription.accepted().resource_subscriptions.clone();
    for uri in uris.unwrap_or_default() {
        let Some((resource, _)) = catalog.resource_for(&uri) else {
            continue;
        };
        let offered =
            crate::mcp::server::offer::offered(resource.policy(), resource.scopes(), &ctx)
                .await
                .map_err(|error| super::policy_failed(&error, "resource"))?;
        if offered {
            readable.push(uri);
        }
    }
    // An anonymous caller's streams are bound by the server's limit only: all are one owner.
    let owner = Some(session.task_owner(cx)).filter(|owner| owner != ANYONE);
    let Some(key) = catalog
        .subscriptions
        .open(owner, subscription.sink().clone(), readable, ctx)
    else {
        tracing::warn!("a subscriptions/listen stream was refused: too many are open");
        return Err(ErrorData::internal_error(
            "too many subscription streams are open, the caller's or the server's, to open \
             another",
            None,
        ));
    };
    let _open = Open {
        subscriptions: &catalog.subscriptions,
        key,
    };
    subscription.cancelled().await;
    Ok(())
}

/// An open stream, forgotten when dropped.
struct Open<'a> {
    subscriptions: &'a Subscriptions,
    key: ListenerKey,
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.subscriptions.close(self.key);
    }
}
