//! The task rewriting of a byte-stream transport (stdio, M5): newline-delimited JSON-RPC
//! pumped between the client's streams and the SDK's, each message through [`Tasks`].

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tool_core::CancellationToken;

use super::Tasks;

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
                () = pump(reader, pump_in, |line| inward.incoming(line)) => {}
                () = stop.cancelled() => {}
            }
        };
        let outward = pump(pump_out, writer, |line| tasks.outgoing(line));
        tokio::join!(reading, outward);
    };
    (sdk_in, sdk_out, pumps)
}

/// Moves each line of `from` to `to`, through `rewrite`, until `from` ends or `to` fails;
/// then closes `to`.
async fn pump<R, W>(from: R, mut to: W, rewrite: impl Fn(&[u8]) -> Option<Vec<u8>>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut from = BufReader::new(from);
    let mut line = Vec::new();
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        let written = match rewrite(body) {
            Some(mut rewritten) => {
                rewritten.push(b'\n');
                to.write_all(&rewritten).await
            }
            None => to.write_all(&line).await,
        };
        if written.is_err() || to.flush().await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}
