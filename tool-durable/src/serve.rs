//! [`serve`]: an [`AgentRun`] on Restate's HTTP/2 endpoint.

use std::future::Future;

use restate_sdk::endpoint::{Endpoint, ServiceOptions};
use restate_sdk::http_server::HttpServer;
use restate_sdk::service::IntoServiceDefinition;
use tokio::net::TcpListener;

use crate::workflow::AgentRun;

/// How many attempts a durable run gets before Restate parks it (W5): a run that keeps
/// failing (its model provider down, its journal refused) is paused, its state kept, to be
/// resumed by an operator, rather than failed.
pub const DEFAULT_ATTEMPTS: u64 = 20;

/// Serves `workflow` on `listener` (HTTP/2 cleartext, as the Restate server calls a
/// deployment) until `shutdown` completes. Register the listener's address with the server
/// (`POST /deployments` on its admin port) before starting runs.
///
/// A run's attempt that fails (a retried model request, a journal error) is retried by
/// Restate; after [`DEFAULT_ATTEMPTS`] attempts the run is paused, not failed (W5).
pub async fn serve(workflow: AgentRun, listener: TcpListener, shutdown: impl Future) {
    let definition = workflow.into_service_definition().options(
        ServiceOptions::new()
            .retry_policy_max_attempts(DEFAULT_ATTEMPTS)
            .retry_policy_pause_on_max_attempts(),
    );
    let endpoint = Endpoint::builder().bind(definition).build();
    HttpServer::new(endpoint)
        .serve_with_cancel(listener, shutdown)
        .await;
}
