//! The 2025-11-25 task messages rmcp's types do not carry, rewritten on the JSON-RPC bytes
//! (M5): `wire` holds the rewriting, `http` applies it to streamable HTTP (an axum
//! middleware), `io` to a byte-stream transport (stdio). Why it is bytes and when it goes:
//! the seam's own documentation, `compat`.

pub(crate) mod http;
pub(crate) mod io;
mod wire;

use crate::mcp::server::tasks::Tasks;

/// A message from the client, rewritten for the SDK (`None`: unchanged, or no tool of the
/// server runs as a task).
fn incoming(tasks: &Tasks, bytes: &[u8]) -> Option<Vec<u8>> {
    tasks.enabled().then(|| wire::incoming(bytes)).flatten()
}

/// A message to the client, rewritten for 2025-11-25 tasks (`None`: unchanged).
fn outgoing(tasks: &Tasks, bytes: &[u8]) -> Option<Vec<u8>> {
    if !tasks.enabled() {
        return None;
    }
    wire::outgoing(bytes, &|name| tasks.support(name))
}
