//! [`ServeError`]: why serving stopped, or could not start.

use tool_core::BoxError;

/// Why serving stopped, or could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The session could not start: the client closed the stream before the first message,
    /// or sent something that cannot open a session.
    #[error("the MCP session could not start: {0}")]
    Start(#[source] BoxError),
    /// The task running the session failed (it panicked, or was aborted).
    #[error("the MCP session's task failed: {0}")]
    Task(#[source] tokio::task::JoinError),
    /// The HTTP listener could not be bound.
    #[error("cannot listen for MCP over HTTP: {0}")]
    Bind(#[source] std::io::Error),
    /// The HTTP server failed.
    #[error("the MCP HTTP server failed: {0}")]
    Http(#[source] std::io::Error),
}
