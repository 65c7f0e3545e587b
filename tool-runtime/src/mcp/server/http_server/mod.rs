//! The streamable HTTP transport of [`McpServer`](super::McpServer): rmcp's service mounted
//! on an axum router, behind a guard that checks each request before it is served and
//! answers a refusal with `Connection: close`. Every accepted socket gets `TCP_NODELAY`
//! ([`accepting`]). A stateless server with JSON answers answers a plain `tools/call` without
//! rmcp's framing (`compat::direct_call`), and a server with tasks rewrites the 2025-11-25
//! task messages (`compat::tasks`): both mounted here, both behind that seam.
//!
//! - `options`: [`HttpOptions`].
//! - `authorize`: a protected resource's metadata, token and scope checks (Z1–Z3).
//! - `guard`: what a request goes through first: its `Host` and `Origin` (T4), the context
//!   function, the session bounds (T5).
//! - `host`: the `Host`s a server answers to (T4).
//! - `origin`: the browser origins a server accepts (T4).
//! - `principal`: whom a session is counted against (T5).
//! - `sessions`: rmcp's session manager with the sessions counted (T5).
//! - `refusal`: the answers to refused requests, and `Connection: close` on them (T4).

mod authorize;
mod guard;
mod host;
mod options;
mod origin;
mod principal;
mod refusal;
mod sessions;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::serve::{ListenerExt, TapIo};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tool_core::CancellationToken;

use super::compat::{self, DirectCalls};
use super::error::ServeError;
use super::handler::Handler;
use super::request::McpTransport;
use super::session::Session;
use super::shared::Shared;
use guard::{Guard, SessionBounds};
use host::Hosts;
use origin::Origins;
use sessions::{Bounded, Ledger, Limits};

pub use options::HttpOptions;

/// A running streamable HTTP server, made by
/// [`McpServer::bind_http`](super::McpServer::bind_http).
///
/// Dropping it does not stop the server: call [`HttpServer::shutdown`].
#[derive(Debug)]
pub struct HttpServer {
    local_addr: SocketAddr,
    path: String,
    shutdown: CancellationToken,
    task: JoinHandle<std::io::Result<()>>,
    direct_calls: Option<Arc<DirectCalls>>,
}

impl HttpServer {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The URL of the MCP endpoint, `http://ADDR/PATH`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local_addr, self.path)
    }

    /// Stops accepting requests, ends the open sessions and waits for the server to stop.
    ///
    /// # Errors
    ///
    /// Returns [`ServeError::Http`] when the server failed, [`ServeError::Task`] when its
    /// task did.
    pub async fn shutdown(self) -> Result<(), ServeError> {
        self.shutdown.cancel();
        self.wait().await
    }

    /// Waits for the server to stop (after [`HttpServer::shutdown`] from a clone of its
    /// token, or a failure).
    ///
    /// # Errors
    ///
    /// As [`HttpServer::shutdown`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future leaves the server running.
    pub async fn wait(self) -> Result<(), ServeError> {
        match self.task.await {
            Ok(result) => result.map_err(ServeError::Http),
            Err(e) => Err(ServeError::Task(e)),
        }
    }

    /// A token that stops the server when cancelled.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// How many `tools/call` requests the server answered without rmcp's framing (see
    /// `HttpOptions::direct_calls`): for the tests that compare both ways.
    #[doc(hidden)]
    pub fn direct_calls_answered(&self) -> u64 {
        self.direct_calls
            .as_ref()
            .map_or(0, |calls| calls.answered())
    }
}

/// Serves `shared` on `listener` in a task of the current runtime.
pub(crate) fn spawn(
    shared: Arc<Shared>,
    listener: TcpListener,
    local_addr: SocketAddr,
    options: HttpOptions,
) -> HttpServer {
    let shutdown = CancellationToken::new();
    let mut config =
        StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
    if let Some(hosts) = options.allowed_hosts.clone() {
        config = config.with_allowed_hosts(hosts);
    }
    if options.stateless {
        config = config
            .with_legacy_session_mode(false)
            .with_json_response(options.json_answers);
    }
    let ledger = Arc::new(Ledger::new(Limits {
        total: options.max_sessions,
        per_principal: options.max_sessions_per_principal,
    }));
    let guard = Arc::new(Guard {
        shared: Arc::clone(&shared),
        hosts: match &options.allowed_hosts {
            Some(entries) => Hosts::from_entries(entries),
            None => Hosts::loopback(),
        },
        origins: match &options.allowed_origins {
            Some(entries) => Origins::from_entries(entries),
            None => Origins::loopback(),
        },
        // A stateless server holds no session: no bound applies.
        sessions: (!options.stateless).then(|| SessionBounds {
            ledger: Arc::clone(&ledger),
            key: options.principal_key.clone(),
            retry_after: SessionBounds::retry_after(options.session_idle_timeout),
            max_body: config.max_request_body_bytes,
        }),
        auth: (options.authorization.clone()).map(|auth| {
            authorize::Authorizer::new(auth, &options.path, &shared, !options.stateless)
        }),
        max_body: config.max_request_body_bytes,
    });
    let stateless = options.stateless;
    let max_body = config.max_request_body_bytes;
    let fast = options.stateless && options.json_answers && options.direct_calls;
    let (compat, direct_calls) = compat::Mount::new(&shared, fast, max_body, &shutdown);
    let service = StreamableHttpService::new(
        move || {
            let session = Session::new(Arc::clone(&shared), McpTransport::Http);
            Ok(Handler::new(session.with_sessions(!stateless)))
        },
        Arc::new(Bounded::new(ledger, options.session_idle_timeout)),
        config,
    );
    // Inside the guard: a direct call is checked as any request is (T4).
    let router = compat
        .layers(axum::Router::new().route_service(&options.path, service))
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            guard::check(Arc::clone(&guard), request, next)
        }))
        .layer(middleware::map_response(refusal::close_after_errors));
    let stop = shutdown.clone();
    let task = tokio::spawn(async move {
        axum::serve(
            accepting(listener),
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async move { stop.cancelled_owned().await })
        .await
    });
    HttpServer {
        local_addr,
        path: options.path,
        shutdown,
        task,
        direct_calls,
    }
}

/// The listener the server accepts connections from: `listener`, each accepted socket set up
/// by [`configure_accepted`] before anything is read from it.
fn accepting(listener: TcpListener) -> TapIo<TcpListener, fn(&mut TcpStream)> {
    listener.tap_io(configure_accepted)
}

/// Sets `TCP_NODELAY` on an accepted socket. An answer goes out in pieces (the
/// head of an event stream, then each event); without it, Nagle's algorithm holds each piece
/// after the first until the client acknowledges the previous one, and a client that delays
/// its acknowledgements (Linux: up to 40 ms) makes every answer wait that long.
fn configure_accepted(stream: &mut TcpStream) {
    if let Err(error) = stream.set_nodelay(true) {
        // The connection still works, only slower: serve it.
        tracing::debug!(error = %error, "TCP_NODELAY could not be set on an MCP connection");
    }
}

#[cfg(test)]
mod tests {
    use axum::serve::Listener;

    use super::*;

    /// A socket accepted through the server's own accept path has `TCP_NODELAY`
    /// (an accepted socket does not have it by default).
    #[tokio::test]
    async fn every_accepted_socket_has_tcp_nodelay() {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port is free");
        let addr = listener.local_addr().expect("a bound address");
        let mut listener = accepting(listener);
        for _ in 0..2 {
            let client = TcpStream::connect(addr).await.expect("the server listens");
            let (served, peer) = listener.accept().await;
            assert_eq!(peer, client.local_addr().expect("a connected socket"));
            assert!(served.nodelay().expect("a connected socket"));
        }
    }
}
