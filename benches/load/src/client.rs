//! A keep-alive HTTP/1.1 MCP client, as pooled clients are: one connection, one request at a
//! time, every answer read to its end (by `Content-Length` or chunked), its JSON-RPC body
//! decoded and the call's result returned. Nothing the server sends is trusted: every
//! failure is an error value, never a panic.

use std::fmt;
use std::net::SocketAddr;

use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The MCP protocol version the calls declare (`MCP-Protocol-Version`).
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// Why a call got no tool result.
#[derive(Debug)]
pub enum CallError {
    /// The connection failed or closed.
    Io(std::io::Error),
    /// The answer was not HTTP the client understands.
    Http(String),
    /// The status was not 200.
    Status(u16, String),
    /// The body was not the JSON-RPC answer to the call.
    Body(String),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Io(e) => write!(f, "I/O: {e}"),
            CallError::Http(e) => write!(f, "HTTP: {e}"),
            CallError::Status(s, body) => write!(f, "status {s}: {body}"),
            CallError::Body(e) => write!(f, "body: {e}"),
        }
    }
}

impl From<std::io::Error> for CallError {
    fn from(e: std::io::Error) -> Self {
        CallError::Io(e)
    }
}

/// What a `tools/call` was answered with.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A result without `isError`: its first text block.
    Result(String),
    /// A result with `isError: true`: its first text block.
    ToolError(String),
    /// A JSON-RPC error: its message.
    RpcError(String),
}

#[derive(Deserialize)]
struct RpcAnswer {
    id: Option<Value>,
    result: Option<CallResult>,
    error: Option<RpcError>,
}

#[derive(Deserialize)]
struct CallResult {
    #[serde(default)]
    content: Vec<ContentBlock>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct ContentBlock {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct RpcError {
    #[serde(default)]
    message: String,
}

/// One kept-alive connection to an MCP endpoint.
pub struct Connection {
    addr: SocketAddr,
    stream: Option<TcpStream>,
    /// Bytes read and not consumed yet.
    buf: Vec<u8>,
    /// `POST … Content-Length: ` : the request's head up to its body's length.
    head: Vec<u8>,
    request: Vec<u8>,
    next_id: u64,
}

impl Connection {
    /// A client of `http://addr/mcp` that sends `bearer` as its access token, when given; it
    /// connects on the first call (or [`Connection::connect`]).
    pub fn with_bearer(addr: SocketAddr, bearer: Option<&str>) -> Self {
        let authorization = bearer
            .map(|token| format!("Authorization: Bearer {token}\r\n"))
            .unwrap_or_default();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{authorization}\
             MCP-Protocol-Version: {PROTOCOL_VERSION}\r\nContent-Length: "
        )
        .into_bytes();
        Self {
            addr,
            stream: None,
            buf: Vec::with_capacity(8192),
            head,
            request: Vec::with_capacity(1024),
            next_id: 1,
        }
    }

    /// Opens the connection now (`TCP_NODELAY`, as asyncio and hyper clients set it).
    ///
    /// # Errors
    ///
    /// When the server cannot be reached.
    pub async fn connect(&mut self) -> std::io::Result<()> {
        let stream = TcpStream::connect(self.addr).await?;
        stream.set_nodelay(true)?;
        self.stream = Some(stream);
        self.buf.clear();
        Ok(())
    }

    /// Forgets the connection: the next call opens a new one.
    pub fn reset(&mut self) {
        self.stream = None;
        self.buf.clear();
    }

    /// Calls `tool` with `arguments` (JSON object text) and reads the whole answer.
    ///
    /// # Errors
    ///
    /// When the call got no tool result; the connection is then dropped.
    pub async fn call(&mut self, tool: &str, arguments: &str) -> Result<Answer, CallError> {
        let result = self.call_inner(tool, arguments).await;
        if result.is_err() {
            self.reset();
        }
        result
    }

    async fn call_inner(&mut self, tool: &str, arguments: &str) -> Result<Answer, CallError> {
        if self.stream.is_none() {
            self.connect().await?;
        }
        let id = self.next_id;
        self.next_id += 1;
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        );
        self.request.clear();
        self.request.extend_from_slice(&self.head);
        self.request
            .extend_from_slice(format!("{}\r\n\r\n", body.len()).as_bytes());
        self.request.extend_from_slice(body.as_bytes());
        let Some(stream) = self.stream.as_mut() else {
            return Err(CallError::Http("no connection".to_owned()));
        };
        stream.write_all(&self.request).await?;

        let (status, event_stream, close, body) = self.read_response().await?;
        if close {
            self.reset();
        }
        let text = String::from_utf8_lossy(&body);
        if status != 200 {
            return Err(CallError::Status(status, preview(&text)));
        }
        let json = if event_stream {
            // The last `data:` line of the stream that is the answer.
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .rfind(|d| d.contains("\"id\""))
                .ok_or_else(|| {
                    CallError::Body(format!("no answer in the stream: {}", preview(&text)))
                })?
        } else {
            &text
        };
        let answer: RpcAnswer = serde_json::from_str(json)
            .map_err(|e| CallError::Body(format!("{e}: {}", preview(json))))?;
        if answer.id.as_ref().and_then(Value::as_u64) != Some(id) {
            return Err(CallError::Body(format!(
                "the answer's id is not the call's ({id}): {}",
                preview(json)
            )));
        }
        match (answer.result, answer.error) {
            (Some(result), None) => {
                let text = result
                    .content
                    .into_iter()
                    .find_map(|c| c.text)
                    .unwrap_or_default();
                Ok(if result.is_error == Some(true) {
                    Answer::ToolError(text)
                } else {
                    Answer::Result(text)
                })
            }
            (None, Some(error)) => Ok(Answer::RpcError(error.message)),
            _ => Err(CallError::Body(format!(
                "neither a result nor an error: {}",
                preview(json)
            ))),
        }
    }

    /// Reads one response: (status, whether it is an event stream, whether the server closes
    /// the connection, body).
    async fn read_response(&mut self) -> Result<(u16, bool, bool, Vec<u8>), CallError> {
        // The head.
        let (status, event_stream, close, length, chunked, head_len) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut response = httparse::Response::new(&mut headers);
            match response.parse(&self.buf) {
                Ok(httparse::Status::Complete(head_len)) => {
                    let status = response.code.unwrap_or(0);
                    let (mut event_stream, mut close, mut length, mut chunked) =
                        (false, false, None, false);
                    for h in response.headers.iter() {
                        let value = std::str::from_utf8(h.value).unwrap_or("");
                        if h.name.eq_ignore_ascii_case("content-length") {
                            length = Some(value.trim().parse::<usize>().map_err(|e| {
                                CallError::Http(format!("bad Content-Length `{value}`: {e}"))
                            })?);
                        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                            chunked = value.to_ascii_lowercase().contains("chunked");
                        } else if h.name.eq_ignore_ascii_case("content-type") {
                            event_stream = value.starts_with("text/event-stream");
                        } else if h.name.eq_ignore_ascii_case("connection") {
                            close = value.eq_ignore_ascii_case("close");
                        }
                    }
                    break (status, event_stream, close, length, chunked, head_len);
                }
                Ok(httparse::Status::Partial) => self.fill().await?,
                Err(e) => return Err(CallError::Http(format!("bad response head: {e}"))),
            }
        };
        self.buf.drain(..head_len);
        let body = if chunked {
            self.read_chunked().await?
        } else if let Some(length) = length {
            while self.buf.len() < length {
                self.fill().await?;
            }
            let body = self.buf[..length].to_vec();
            self.buf.drain(..length);
            body
        } else {
            // Neither: the body runs to the end of the connection.
            loop {
                match self.fill().await {
                    Ok(()) => {}
                    Err(CallError::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                        break;
                    }
                    Err(e) => return Err(e),
                }
            }
            return Ok((status, event_stream, true, std::mem::take(&mut self.buf)));
        };
        Ok((status, event_stream, close, body))
    }

    async fn read_chunked(&mut self) -> Result<Vec<u8>, CallError> {
        let mut body = Vec::new();
        loop {
            let line_end = loop {
                if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                    break i;
                }
                self.fill().await?;
            };
            let line = std::str::from_utf8(&self.buf[..line_end]).unwrap_or("");
            let size_text = line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_text, 16)
                .map_err(|e| CallError::Http(format!("bad chunk size `{size_text}`: {e}")))?;
            self.buf.drain(..line_end + 2);
            while self.buf.len() < size + 2 {
                self.fill().await?;
            }
            body.extend_from_slice(&self.buf[..size]);
            self.buf.drain(..size + 2);
            if size == 0 {
                return Ok(body);
            }
        }
    }

    /// Reads more bytes into the buffer.
    async fn fill(&mut self) -> Result<(), CallError> {
        let Some(stream) = self.stream.as_mut() else {
            return Err(CallError::Http("no connection".to_owned()));
        };
        self.buf.reserve(8192);
        let n = stream.read_buf(&mut self.buf).await?;
        if n == 0 {
            return Err(CallError::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            )));
        }
        Ok(())
    }
}

/// The first 300 characters of `text`, for messages.
pub fn preview(text: &str) -> String {
    let mut end = text.len().min(300);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}
