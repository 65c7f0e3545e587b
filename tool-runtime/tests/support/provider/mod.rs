//! A local HTTP/1.1 server for the provider tests (`tests/provider_*.rs`): it answers each
//! request with the next scripted reply, with exact control over chunk boundaries, delays, an
//! early close or a hang, records every request it receives, and sees when a client hangs up.
//! It listens on 127.0.0.1 only: no test needs the network. Also here: the recorded payloads
//! of `tests/fixtures/`, the golden-file check, and the answers each provider streams.
//!
//! `scenario`: the agent every provider test runs.

#![allow(dead_code, unreachable_pub)]

pub mod scenario;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// How a streamed body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The last chunk, then the connection closes.
    Complete,
    /// The connection closes without the last chunk (a broken stream).
    Close,
    /// The connection stays open, silent, until the client hangs up.
    Hang,
}

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    pieces: Vec<Vec<u8>>,
    chunked: bool,
    delay: Duration,
    end: End,
    silent: bool,
}

impl Reply {
    /// A server-sent event stream with this body, in one chunk.
    pub fn sse(body: impl Into<String>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            pieces: vec![body.into().into_bytes()],
            chunked: true,
            delay: Duration::ZERO,
            end: End::Complete,
            silent: false,
        }
    }

    /// A binary body of this content type, in one chunk (Bedrock's event stream).
    pub fn bytes(content_type: &str, body: Vec<u8>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), content_type.into())],
            pieces: vec![body],
            chunked: true,
            delay: Duration::ZERO,
            end: End::Complete,
            silent: false,
        }
    }

    /// A JSON body with this status.
    pub fn json(status: u16, body: Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            pieces: vec![body.to_string().into_bytes()],
            chunked: false,
            delay: Duration::ZERO,
            end: End::Complete,
            silent: false,
        }
    }

    /// A reply that never comes: the request is read, then nothing is sent until the client
    /// hangs up.
    pub fn silence() -> Self {
        let mut reply = Self::sse("");
        reply.silent = true;
        reply
    }

    /// The same reply, with a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same reply with this `content-type` in place of its own, or none at all.
    pub fn content_type(mut self, value: Option<&str>) -> Self {
        self.headers
            .retain(|(name, _)| !name.eq_ignore_ascii_case("content-type"));
        if let Some(value) = value {
            self.headers.push(("content-type".into(), value.into()));
        }
        self
    }

    /// The same body, sent in chunks of these sizes in turn (the last size repeats).
    pub fn split_every(mut self, sizes: &[usize]) -> Self {
        let body: Vec<u8> = self.pieces.concat();
        let mut pieces = Vec::new();
        let mut at = 0;
        let mut i = 0;
        while at < body.len() {
            let size = sizes[i.min(sizes.len() - 1)].max(1);
            let end = (at + size).min(body.len());
            pieces.push(body[at..end].to_vec());
            at = end;
            i += 1;
        }
        self.pieces = pieces;
        self.chunked = true;
        self
    }

    /// The same body, with this pause before each chunk after the first.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// The same reply, ending this way.
    pub fn end(mut self, end: End) -> Self {
        self.end = end;
        self
    }
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Request {
    /// The value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body, as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("the request body is JSON")
    }
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    requests: Vec<Request>,
    hung_up: usize,
}

/// The server. Dropping it stops it.
pub struct Server {
    url: String,
    state: Arc<Mutex<State>>,
    hangup: Arc<Notify>,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// A server on a free port of 127.0.0.1 that answers with `replies`, in order (and with
    /// a 500 once they are used up).
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().expect("local address"));
        let state = Arc::new(Mutex::new(State {
            replies: replies.into_iter().collect(),
            ..State::default()
        }));
        let hangup = Arc::new(Notify::new());
        let task = tokio::spawn(serve(listener, Arc::clone(&state), Arc::clone(&hangup)));
        Self {
            url,
            state,
            hangup,
            task,
        }
    }

    /// `http://127.0.0.1:port`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.state).requests.clone()
    }

    /// How many requests were received.
    pub fn request_count(&self) -> usize {
        lock(&self.state).requests.len()
    }

    /// How many clients hung up on a reply that was still streaming or silent.
    pub fn hung_up(&self) -> usize {
        lock(&self.state).hung_up
    }

    /// Waits (at most `limit`) until `n` clients hung up; returns whether they did.
    pub async fn wait_hung_up(&self, n: usize, limit: Duration) -> bool {
        let wait = async {
            loop {
                let notified = self.hangup.notified();
                if self.hung_up() >= n {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn serve(listener: TcpListener, state: Arc<Mutex<State>>, hangup: Arc<Notify>) {
    while let Ok((socket, _)) = listener.accept().await {
        let state = Arc::clone(&state);
        let hangup = Arc::clone(&hangup);
        tokio::spawn(async move {
            let _ = answer(socket, &state, &hangup).await;
        });
    }
}

/// Reads one request and writes its scripted reply.
async fn answer(
    mut socket: TcpStream,
    state: &Mutex<State>,
    hangup: &Notify,
) -> std::io::Result<()> {
    let Some(request) = read_request(&mut socket).await? else {
        return Ok(());
    };
    let reply = {
        let mut state = lock(state);
        state.requests.push(request);
        state.replies.pop_front()
    };
    let reply = reply.unwrap_or_else(|| {
        Reply::json(
            500,
            serde_json::json!({"error": {"message": "no reply was scripted"}}),
        )
    });
    if reply.silent {
        wait_for_hangup(&mut socket, state, hangup).await;
        return Ok(());
    }
    let mut head = format!("HTTP/1.1 {} Scripted\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("connection: close\r\n");
    if reply.chunked {
        head.push_str("transfer-encoding: chunked\r\n\r\n");
    } else {
        let length: usize = reply.pieces.iter().map(Vec::len).sum();
        head.push_str(&format!("content-length: {length}\r\n\r\n"));
    }
    socket.write_all(head.as_bytes()).await?;
    socket.flush().await?;
    for (i, piece) in reply.pieces.iter().enumerate() {
        if i > 0 && !reply.delay.is_zero() {
            tokio::time::sleep(reply.delay).await;
        }
        if reply.chunked {
            if piece.is_empty() {
                continue;
            }
            socket
                .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                .await?;
            socket.write_all(piece).await?;
            socket.write_all(b"\r\n").await?;
        } else {
            socket.write_all(piece).await?;
        }
        socket.flush().await?;
    }
    match reply.end {
        End::Complete => {
            if reply.chunked {
                socket.write_all(b"0\r\n\r\n").await?;
            }
            socket.flush().await?;
            socket.shutdown().await?;
        }
        End::Close => socket.shutdown().await?,
        End::Hang => wait_for_hangup(&mut socket, state, hangup).await,
    }
    Ok(())
}

/// Waits until the client closes its side, then records that it hung up.
async fn wait_for_hangup(socket: &mut TcpStream, state: &Mutex<State>, hangup: &Notify) {
    let mut buf = [0u8; 256];
    loop {
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
    lock(state).hung_up += 1;
    hangup.notify_waiters();
}

/// Reads a request: head, then a body of `content-length` bytes.
async fn read_request(socket: &mut TcpStream) -> std::io::Result<Option<Request>> {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            return Ok(None);
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let method = request_line.next().unwrap_or_default().to_owned();
    let path = request_line.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = data[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Ok(Some(Request {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }))
}

/// Reads a model's stream to its end: the events, and the error that ended it, if any.
pub async fn drain_model(
    mut stream: tool_runtime::ModelStream<'_>,
) -> (
    Vec<tool_runtime::ModelEvent>,
    Option<tool_runtime::ModelError>,
) {
    let mut events = Vec::new();
    while let Some(item) =
        std::future::poll_fn(|cx| std::pin::Pin::as_mut(&mut stream).poll_next(cx)).await
    {
        match item {
            Ok(event) => events.push(event),
            Err(e) => return (events, Some(e)),
        }
    }
    (events, None)
}

/// A recorded stream from `tests/fixtures`.
pub fn fixture(name: &str) -> String {
    let path = fixtures_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Compares `actual` with the golden JSON file `name` (as JSON values). With
/// `UPDATE_GOLDEN=1`, writes `actual` there instead, to be reviewed by hand.
pub fn assert_golden(name: &str, actual: &Value) {
    let path = fixtures_dir().join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let text = serde_json::to_string_pretty(actual).expect("JSON renders");
        std::fs::write(&path, text + "\n").expect("write the golden file");
        return;
    }
    let expected: Value = serde_json::from_str(&fixture(name)).expect("the golden file is JSON");
    assert_eq!(
        actual,
        &expected,
        "the request differs from {name}; actual:\n{}",
        serde_json::to_string_pretty(actual).unwrap_or_default()
    );
}

/// A Chat Completions stream that answers with `text`.
pub fn chat_answer(text: &str) -> String {
    let chunk = serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]
    });
    let stop = serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    });
    format!("data: {chunk}\n\ndata: {stop}\n\ndata: [DONE]\n\n")
}

/// A Responses stream that answers with `text`.
pub fn responses_answer(text: &str) -> String {
    let delta = serde_json::json!({
        "type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
        "content_index": 0, "delta": text
    });
    let done = serde_json::json!({
        "type": "response.completed",
        "response": {"id": "resp_1", "status": "completed", "output": [],
                     "usage": {"input_tokens": 30, "output_tokens": 5}}
    });
    format!(
        "event: response.output_text.delta\ndata: {delta}\n\nevent: response.completed\ndata: {done}\n\n"
    )
}

/// A Messages stream that answers with `text`.
pub fn anthropic_answer(text: &str) -> String {
    let events = [
        serde_json::json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "content": [], "usage": {"input_tokens": 30, "output_tokens": 1}}}),
        serde_json::json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        serde_json::json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": text}}),
        serde_json::json!({"type": "content_block_stop", "index": 0}),
        serde_json::json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 5}}),
        serde_json::json!({"type": "message_stop"}),
    ];
    events
        .iter()
        .map(|e| {
            format!(
                "event: {}\ndata: {e}\n\n",
                e["type"].as_str().unwrap_or_default()
            )
        })
        .collect()
}
