//! What an application tells an [`McpServer`]'s clients of its resources and prompts (M7):
//! a resource changed (to the sessions subscribed to it), a list changed (to every session
//! that listed resources or prompts). On protocol 2026-07-28 each goes instead to the
//! `subscriptions/listen` streams (SEP-2575) that asked for it, tagged with the stream's
//! subscription id.

use super::handle::McpServer;
use super::resources::subscriptions::Changed;

impl McpServer {
    /// Tells each session subscribed to `uri` (`resources/subscribe`), and each
    /// `subscriptions/listen` stream that named it, that the resource changed
    /// (`notifications/resources/updated`); returns how many were told. Each is told only if
    /// its caller may still read the resource: its policy and scopes are checked again, on the
    /// context the stream was opened, or the subscription made, with. Sessions whose
    /// transport closed are forgotten; a session that ends with its request (stateless HTTP,
    /// protocol 2026-07-28) is never told.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future stops telling the sessions not told yet.
    pub async fn resource_updated(&self, uri: &str) -> usize {
        let catalog = &self.shared.catalog;
        let resource = catalog.resource_for(uri).map(|(resource, _)| resource);
        catalog.subscriptions.updated(uri, resource).await
    }

    /// Tells every session that listed resources that the list changed
    /// (`notifications/resources/list_changed`): a policy now offers another set, say. Returns
    /// how many were told.
    pub async fn resources_changed(&self) -> usize {
        (self.shared.catalog.subscriptions)
            .list_changed(Changed::Resources)
            .await
    }

    /// Tells every session that listed prompts that the list changed
    /// (`notifications/prompts/list_changed`). Returns how many were told.
    pub async fn prompts_changed(&self) -> usize {
        (self.shared.catalog.subscriptions)
            .list_changed(Changed::Prompts)
            .await
    }

    /// How many `subscriptions/listen` streams (protocol 2026-07-28) are open.
    pub fn listening(&self) -> usize {
        self.shared.catalog.subscriptions.streams()
    }

    /// How many sessions and `subscriptions/listen` streams are subscribed to `uri`.
    pub fn subscribers(&self, uri: &str) -> usize {
        self.shared.catalog.subscriptions.subscribers(uri)
    }

    /// The resources and resource templates served, in the order added (M7).
    pub fn resources(&self) -> &[super::McpResource] {
        &self.shared.catalog.resources
    }

    /// The prompts served, in the order added (M7).
    pub fn prompts(&self) -> &[super::McpPrompt] {
        &self.shared.catalog.prompts
    }
}
