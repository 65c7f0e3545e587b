//! What the Gemini driver's tests share (V3–V5): the answers Google's API streams, in its
//! real shapes (each checked against Google's own `GenerateContentResponse`), and the
//! checker, a Python helper over Google's own packages that every request body the local
//! server receives is parsed by (`GenerateContentRequest`, unknown fields refused). The same
//! helper runs the anthropic SDK's `transform_schema`, for the Anthropic strict dialect (V4).

#![allow(dead_code, unreachable_pub)]

pub mod peers;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use super::provider::Server;

/// The helper script.
const CHECK_PY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/gemini/check.py");

/// The Python helper that checks payloads against Google's definitions.
pub struct Checker {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Checker {
    /// Starts the helper (provisioning its environment on first use). Panics, failing the
    /// test, when Python or Google's packages cannot be had: the check is never skipped.
    pub fn start() -> Self {
        let python = peers::interpreter().unwrap_or_else(|e| panic!("{e}"));
        let mut child = Command::new(python)
            .arg(CHECK_PY)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the checker starts");
        let stdin = child.stdin.take().expect("the checker's stdin");
        let stdout = BufReader::new(child.stdout.take().expect("the checker's stdout"));
        Self {
            child,
            stdin,
            stdout,
        }
    }

    fn ask(&mut self, command: &Value) -> Value {
        writeln!(self.stdin, "{command}").expect("the checker reads");
        self.stdin.flush().expect("the checker reads");
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("the checker answers");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("the checker's answer {line:?}: {e}"))
    }

    fn verdict(answer: &Value) -> Result<(), String> {
        if answer["ok"] == true {
            Ok(())
        } else {
            Err(answer["error"].as_str().unwrap_or("no reason").to_owned())
        }
    }

    /// Parses a request body into Google's `GenerateContentRequest`.
    pub fn request(&mut self, body: &str) -> Result<(), String> {
        Self::verdict(&self.ask(&json!({ "request": body })))
    }

    /// Parses an event's data into Google's `GenerateContentResponse`.
    pub fn response(&mut self, data: &str) -> Result<(), String> {
        Self::verdict(&self.ask(&json!({ "response": data })))
    }

    /// Checks `rewritten` against google-genai's `JSONSchema` type, and returns the
    /// (pointer, keyword) pairs that type refuses in `neutral`.
    pub fn schema(
        &mut self,
        neutral: &Value,
        rewritten: &Value,
    ) -> Result<Vec<(String, String)>, String> {
        let answer = self.ask(&json!({ "neutral": neutral, "rewritten": rewritten }));
        Self::verdict(&answer)?;
        Ok(answer["refused"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|pair| {
                let text = |i: usize| pair[i].as_str().unwrap_or_default().to_owned();
                (text(0), text(1))
            })
            .collect())
    }

    /// `schema` as the anthropic SDK's `transform_schema` makes it (its strict dialect).
    pub fn anthropic_strict(&mut self, schema: &Value) -> Result<Value, String> {
        let answer = self.ask(&json!({ "anthropic_strict": schema }));
        Self::verdict(&answer)?;
        Ok(answer["schema"].clone())
    }

    /// Every request `server` received, each parsed by Google's definition: any unknown or
    /// mistyped field fails the test, naming the request.
    pub fn assert_requests(&mut self, server: &Server) {
        let requests = server.requests();
        assert!(!requests.is_empty(), "the server received no request");
        for (i, request) in requests.iter().enumerate() {
            if let Err(e) = self.request(&request.body) {
                panic!(
                    "request {i} is not a GenerateContentRequest: {e}\n{}",
                    request.body
                );
            }
        }
    }

    /// Every event of `sse` parsed by Google's `GenerateContentResponse` (the error events
    /// of a stream are not responses and are skipped).
    pub fn assert_stream(&mut self, sse: &str) {
        for data in sse.lines().filter_map(|l| l.strip_prefix("data: ")) {
            if data.contains("\"error\"") {
                continue;
            }
            if let Err(e) = self.response(data) {
                panic!("an event is not a GenerateContentResponse: {e}\n{data}");
            }
        }
    }
}

impl Drop for Checker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Events as Google streams them (`alt=sse`): `data: …` and a CRLF blank line each.
pub fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("data: {e}\r\n\r\n"))
        .collect()
}

/// The usage of a reply, as `usageMetadata` reports it.
pub fn usage(prompt: u64, candidates: u64, thoughts: u64) -> Value {
    json!({
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates + thoughts,
        "thoughtsTokenCount": thoughts,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
    })
}

/// One streamed response holding `parts`, and `finish` when it is the last.
pub fn chunk(parts: Value, finish: Option<&str>, usage: Value) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if let Some(reason) = finish {
        candidate["finishReason"] = reason.into();
    }
    json!({
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": "gemini-2.5-flash",
        "responseId": "mFoaaZ2mNPjO7M8P5sPCgAc",
    })
}

/// A stream that answers with `text`, in two pieces, then an empty signed part (as thinking
/// models end their answers).
pub fn answer(text: &str) -> String {
    let mid = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(0, |(i, _)| i);
    sse(&[
        chunk(json!([{"text": &text[..mid]}]), None, usage(31, 2, 0)),
        chunk(
            json!([{"text": &text[mid..]}, {"text": "", "thoughtSignature": "Q2lJQmpz"}]),
            Some("STOP"),
            usage(31, 9, 24),
        ),
    ])
}

/// A tool-call turn: a thought summary (not passed on), text, then two parallel calls of
/// `lookup-window`, the first signed, the second with no id (as the Gemini API sends them).
pub fn two_calls() -> String {
    sse(&[
        chunk(
            json!([{"text": "Checking both services.", "thought": true}]),
            None,
            usage(412, 0, 57),
        ),
        chunk(json!([{"text": "Let me look."}]), None, usage(412, 4, 57)),
        chunk(
            json!([
                {"functionCall": {"id": "fc-1", "name": "lookup-window",
                                  "args": {"service_id": "svc-42", "days": 3}},
                 "thoughtSignature": "RXFJS0NxWUdBUT09"},
                {"functionCall": {"name": "lookup-window", "args": {"service_id": "svc-7"}}},
            ]),
            Some("STOP"),
            usage(412, 38, 57),
        ),
    ])
}

/// A Google error body (`google.rpc.Status` as JSON), with `details`.
pub fn error_body(code: u16, status: &str, message: &str, details: Value) -> Value {
    json!({"error": {"code": code, "message": message, "status": status, "details": details}})
}
