//! The task rewriting of a byte-stream transport (stdio, M5): newline-delimited JSON-RPC
//! pumped between the client's streams and the SDK's, each message through the rewriting.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, DuplexStream};
use tool_core::CancellationToken;

use super::{incoming, outgoing};
use crate::mcp::lines::pump;
use crate::mcp::server::tasks::Tasks;

/// How much each pipe between the pumps and the SDK buffers.
const PIPE: usize = 64 * 1024;

/// The SDK's ends of the pipes, and the pumps that move each message between them and the
/// client's `reader` and `writer`, rewritten. The pumps end when the client closes its stream
/// and the SDK its own, or, on the client's side, when `stop` is cancelled.
pub(crate) fn pipes<R, W>(
    tasks: Arc<Tasks>,
    reader: R,
    writer: W,
    stop: CancellationToken,
) -> (DuplexStream, DuplexStream, impl Future<Output = ()> + Send)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (sdk_in, pump_in) = tokio::io::duplex(PIPE);
    let (sdk_out, pump_out) = tokio::io::duplex(PIPE);
    let inward = Arc::clone(&tasks);
    let pumps = async move {
        let reading = async {
            tokio::select! {
                () = pump(reader, pump_in, |line| incoming(&inward, line)) => {}
                () = stop.cancelled() => {}
            }
        };
        let outward = pump(pump_out, writer, |line| outgoing(&tasks, line));
        tokio::join!(reading, outward);
    };
    (sdk_in, sdk_out, pumps)
}
