//! What tool-durable's integration tests share: a real Restate server of their own
//! ([`RestateServer`], provisioned by the tests themselves with npm under `target/peers/`) and
//! worker processes that serve Restate handlers ([`Worker`], an example of this crate, started,
//! killed with SIGKILL and started again), plus the small pieces both need: free loopback ports,
//! temporary directories, the build's `target/` directory and a tiny HTTP/1.1 client (the
//! server's ingress and admin API speak HTTP/1.1; no HTTP client crate is needed for JSON over
//! loopback).
//!
//! ```ignore
//! mod support;
//! use support::{RestateServer, Worker};
//!
//! let server = RestateServer::start().await?;
//! let mut worker = Worker::start("restate_echo", &[], &[("EFFECTS_FILE", "/tmp/x")]).await?;
//! server.register(&worker.url()).await?;
//! let (status, body) = server.send("/Echo/key/run", serde_json::Value::Null).await?;
//! ```
#![allow(dead_code, unreachable_pub)]

pub mod durable;
pub mod restate_server;
pub mod worker;

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub use restate_server::RestateServer;
pub use worker::Worker;

/// The build's `target/` directory, found from the test binary's path
/// (`target/<profile>/deps/<binary>`), as the other tests of the workspace find it for their
/// peers. (A build for an explicit `--target <triple>` puts one more level in between, which
/// these tests do not support.)
pub fn target_dir() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find the test binary's path")?;
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .with_context(|| format!("the test binary `{}` is not under target/", exe.display()))
}

/// The directory of the test binary's profile (`target/debug` for `dev` and `test`).
pub fn profile_dir() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find the test binary's path")?;
    exe.ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .with_context(|| format!("the test binary `{}` is not under target/", exe.display()))
}

/// `n` distinct free loopback ports: all bound at once, then released for a process to take
/// (another process may take one in between; callers that start servers retry).
pub fn free_ports(n: usize) -> anyhow::Result<Vec<u16>> {
    let listeners = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()
        .context("no free loopback port")?;
    listeners
        .iter()
        .map(|listener| Ok(listener.local_addr()?.port()))
        .collect()
}

/// A loopback address.
pub fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// The lines of the file at `path` (none when it does not exist): a side-effect ledger.
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The last `lines` lines of `text`.
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A fresh directory under the system's temporary directory, removed (with all it holds) when
/// dropped, also when the test fails.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Makes `<temp>/<prefix>-<pid>-<counter>-<nanos>`.
    pub fn new(prefix: &str) -> anyhow::Result<Self> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let path = std::env::temp_dir().join(format!(
            "{prefix}-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path)
            .with_context(|| format!("cannot create `{}`", path.display()))?;
        Ok(Self { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// An HTTP response as [`http`] read it.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// Each header, its name lowercase.
    pub headers: Vec<(String, String)>,
    /// The body, unchunked, as text.
    pub body: String,
}

impl HttpResponse {
    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The value of header `name` (lowercase), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The body as JSON: `null` when empty, a JSON string holding the text when it is not
    /// JSON.
    pub fn json(&self) -> Value {
        if self.body.trim().is_empty() {
            return Value::Null;
        }
        serde_json::from_str(&self.body).unwrap_or_else(|_| Value::String(self.body.clone()))
    }
}

/// One HTTP/1.1 request over a connection of its own (`Connection: close`), with a JSON
/// body when `body` is given; the response is read to its end within `timeout`.
pub async fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
    timeout: Duration,
) -> anyhow::Result<HttpResponse> {
    tokio::time::timeout(timeout, exchange(addr, method, path, body))
        .await
        .with_context(|| format!("{method} http://{addr}{path}: no answer within {timeout:?}"))?
        .with_context(|| format!("{method} http://{addr}{path}"))
}

async fn exchange(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> anyhow::Result<HttpResponse> {
    let body = body.map(serde_json::to_vec).transpose()?;
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\n\
         Connection: close\r\n"
    );
    match &body {
        Some(body) => request.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )),
        None => request.push_str("Content-Length: 0\r\n\r\n"),
    }
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(body.as_deref().unwrap_or_default());
    let mut stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    stream.write_all(&bytes).await?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await?;
    parse_response(&raw)
}

fn parse_response(raw: &[u8]) -> anyhow::Result<HttpResponse> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("the response has no complete head")?;
    let head = std::str::from_utf8(&raw[..split]).context("the response head is not UTF-8")?;
    let mut rest = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .with_context(|| format!("not a status line: {status_line:?}"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let mut response = HttpResponse {
        status,
        headers,
        body: String::new(),
    };
    let chunked = response
        .header("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"));
    let body = if chunked {
        let mut body = Vec::new();
        loop {
            let end = rest
                .windows(2)
                .position(|w| w == b"\r\n")
                .context("a chunk without its size line")?;
            let size_line = std::str::from_utf8(&rest[..end])?;
            let size_hex = size_line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size_hex, 16)
                .with_context(|| format!("not a chunk size: {size_line:?}"))?;
            rest = &rest[end + 2..];
            if size == 0 {
                break;
            }
            if rest.len() < size {
                bail!("a chunk shorter than its size");
            }
            body.extend_from_slice(&rest[..size]);
            rest = rest.get(size + 2..).unwrap_or_default();
        }
        body
    } else if let Some(length) = response.header("content-length") {
        let length: usize = length.parse().context("not a content length")?;
        rest.get(..length)
            .context("a body shorter than its content length")?
            .to_vec()
    } else {
        rest.to_vec()
    };
    response.body = String::from_utf8(body).context("the body is not UTF-8")?;
    Ok(response)
}
