//! Newline-delimited JSON-RPC moved between two byte streams, each message through a
//! rewriting: what the MCP tasks of protocol 2025-11-25 need on both sides (M5).

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// Moves each line of `from` to `to`, through `rewrite`, until `from` ends or `to` fails;
/// then closes `to`.
pub(crate) async fn pump<R, W>(from: R, mut to: W, rewrite: impl Fn(&[u8]) -> Option<Vec<u8>>)
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
