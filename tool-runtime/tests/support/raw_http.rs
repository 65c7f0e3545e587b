//! HTTP/1.1 spoken byte by byte over one TCP connection, for the transport tests (T4, T5):
//! what a request's head says exactly, whether the server reads its body, and whether it
//! keeps or closes the connection.
#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// How long a test waits for the server to answer.
const PATIENCE: Duration = Duration::from_secs(10);

/// The `initialize` request of a session-based protocol version.
pub fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    })
}

/// A response as it came over the wire.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    /// Each header line, its name lowercase.
    pub headers: Vec<(String, String)>,
    /// The body, unchunked.
    pub body: String,
}

impl RawResponse {
    /// The value of the header `name` (lowercase), if it is present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Whether the response says the connection ends after it.
    pub fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }

    /// The `mcp-session-id` the response opened, if any.
    pub fn session(&self) -> Option<String> {
        self.header("mcp-session-id").map(str::to_owned)
    }

    /// The JSON-RPC messages of the body (a JSON body or an event stream).
    pub fn messages(&self) -> Vec<Value> {
        if self.body.trim_start().starts_with('{') {
            return serde_json::from_str(&self.body).into_iter().collect();
        }
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect()
    }
}

/// One client connection, kept alive between requests.
pub struct RawConnection {
    stream: BufReader<TcpStream>,
    addr: SocketAddr,
}

impl RawConnection {
    pub async fn open(addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).await.expect("the server listens");
        stream.set_nodelay(true).expect("a connected socket");
        Self {
            stream: BufReader::new(stream),
            addr,
        }
    }

    /// Sends the head of a request to `/mcp` (the MCP `Accept`, the `Content-Length` of
    /// `body` and, unless `headers` has one, `Host` are added) and then `body`.
    pub async fn send(&mut self, method: &str, headers: &[(&str, &str)], body: &[u8]) {
        // One write: a request in two would wait for the server's delayed acknowledgement.
        let mut request = self.head(method, headers, body.len()).into_bytes();
        request.extend_from_slice(body);
        self.send_body(&request).await;
    }

    /// Sends only the head of a request to `/mcp` that announces a body of `length` bytes
    /// (see [`RawConnection::send`]).
    pub async fn send_head(&mut self, method: &str, headers: &[(&str, &str)], length: usize) {
        let head = self.head(method, headers, length);
        self.send_body(head.as_bytes()).await;
    }

    fn head(&self, method: &str, headers: &[(&str, &str)], length: usize) -> String {
        let mut head = format!(
            "{method} /mcp HTTP/1.1\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {length}\r\n"
        );
        if !headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("host"))
        {
            head.push_str(&format!("Host: {}\r\n", self.addr));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        head
    }

    /// Sends (more of) a body.
    pub async fn send_body(&mut self, body: &[u8]) {
        let socket = self.stream.get_mut();
        socket.write_all(body).await.expect("sent");
    }

    /// POSTs `message` with `headers` (and `Content-Type: application/json`), and reads the
    /// response.
    pub async fn post(&mut self, headers: &[(&str, &str)], message: &Value) -> RawResponse {
        let mut all = vec![("Content-Type", "application/json")];
        all.extend_from_slice(headers);
        let body = serde_json::to_vec(message).expect("JSON");
        self.send("POST", &all, &body).await;
        self.response().await
    }

    /// Reads one response: its head, then its body by `Content-Length` or chunks.
    pub async fn response(&mut self) -> RawResponse {
        tokio::time::timeout(PATIENCE, self.read_response())
            .await
            .expect("the server answers within 10 s")
    }

    /// POSTs `message` and reads only the head of the response, for an event stream that
    /// stays open: read its messages with [`RawConnection::next_event`].
    pub async fn post_stream(&mut self, headers: &[(&str, &str)], message: &Value) -> RawResponse {
        let mut all = vec![("Content-Type", "application/json")];
        all.extend_from_slice(headers);
        let body = serde_json::to_vec(message).expect("JSON");
        self.send("POST", &all, &body).await;
        tokio::time::timeout(PATIENCE, self.read_head())
            .await
            .expect("the server answers within 10 s")
    }

    /// The next JSON-RPC message of an open chunked event stream (after
    /// [`RawConnection::post_stream`]), if one comes within `wait`; `None` also when the
    /// stream ended.
    pub async fn next_event(&mut self, pending: &mut String, wait: Duration) -> Option<Value> {
        let read = async {
            loop {
                if let Some(end) = pending.find("\n\n") {
                    let event: String = pending.drain(..end + 2).collect();
                    let data: String = (event.lines())
                        .filter_map(|line| line.strip_prefix("data:"))
                        .map(str::trim)
                        .collect();
                    match serde_json::from_str(&data) {
                        Ok(message) => return Some(message),
                        Err(_) => continue,
                    }
                }
                let size = usize::from_str_radix(self.line().await.trim(), 16).ok()?;
                let mut chunk = vec![0; size + 2];
                self.stream.read_exact(&mut chunk).await.ok()?;
                if size == 0 {
                    return None;
                }
                pending.push_str(&String::from_utf8_lossy(&chunk[..size]).replace('\r', ""));
            }
        };
        tokio::time::timeout(wait, read).await.ok().flatten()
    }

    async fn read_head(&mut self) -> RawResponse {
        let status_line = self.line().await;
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not a status line: {status_line:?}"));
        let mut headers = Vec::new();
        loop {
            let line = self.line().await;
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').expect("a header line");
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
        RawResponse {
            status,
            headers,
            body: String::new(),
        }
    }

    async fn read_response(&mut self) -> RawResponse {
        let mut response = self.read_head().await;
        let mut body = Vec::new();
        if response
            .header("transfer-encoding")
            .is_some_and(|v| v.contains("chunked"))
        {
            loop {
                let size = usize::from_str_radix(self.line().await.trim(), 16).expect("a size");
                let mut chunk = vec![0; size + 2];
                self.stream.read_exact(&mut chunk).await.expect("a chunk");
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else if let Some(length) = response.header("content-length") {
            body = vec![0; length.parse().expect("a length")];
            self.stream.read_exact(&mut body).await.expect("the body");
        }
        response.body = String::from_utf8(body).expect("a text body");
        response
    }

    async fn line(&mut self) -> String {
        let mut line = String::new();
        let read = self.stream.read_line(&mut line).await.expect("readable");
        assert!(read > 0, "the server closed the connection mid-response");
        line.trim_end_matches(['\r', '\n']).to_owned()
    }

    /// Whether the server closes the connection (within 10 s) with nothing more to read.
    pub async fn closed_by_server(&mut self) -> bool {
        let mut rest = Vec::new();
        match tokio::time::timeout(PATIENCE, self.stream.read_to_end(&mut rest)).await {
            Ok(Ok(_)) | Ok(Err(_)) => rest.is_empty(),
            Err(_) => false,
        }
    }
}
