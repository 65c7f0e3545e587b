//! Helpers of the agent tests (`run.rs`, `availability.rs`, `failures.rs`, …): tools made from
//! closures, a streamed run drained to its end, and checks on results and transcripts.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tool_runtime::{
    BoxError, Context, Message, RunError, RunEvent, RunOutput, RunStream, Tool, ToolResult,
};

/// Arguments of any shape (an object root).
pub type Args = BTreeMap<String, serde_json::Value>;

/// A tool named `name` whose handler is `f`.
#[track_caller]
pub fn tool<F, Fut, T, E>(name: &str, f: F) -> Tool
where
    F: Fn(Context, Args) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, E>> + Send + 'static,
    T: serde::Serialize,
    E: Into<BoxError>,
{
    Tool::builder(name, format!("The {name} tool."))
        .handler(f)
        .build()
}

/// A tool that returns its arguments, and counts its runs.
#[track_caller]
pub fn echo(name: &str) -> (Tool, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let tool = tool(name, move |_ctx, args: Args| {
        counter.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, std::convert::Infallible>(args) }
    });
    (tool, runs)
}

/// Every event of a streamed run, and how it ended.
pub async fn drain(mut stream: RunStream) -> (Vec<RunEvent>, Result<RunOutput, RunError>) {
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(RunEvent::Finished(out)) => {
                assert!(stream.next().await.is_none(), "nothing follows Finished");
                return (events, Ok(out));
            }
            Ok(event) => events.push(event),
            Err(e) => {
                assert!(stream.next().await.is_none(), "nothing follows an error");
                return (events, Err(e));
            }
        }
    }
    panic!("the stream ended without Finished or an error");
}

/// The (call id, text) of each tool result.
pub fn texts(results: &[&ToolResult]) -> Vec<(String, String)> {
    results
        .iter()
        .map(|r| (r.call_id.to_string(), r.text.clone()))
        .collect()
}

/// Whether any message of `transcript` mentions `needle`.
pub fn mentions(transcript: &[Message], needle: &str) -> bool {
    transcript.iter().any(|m| {
        m.text().contains(needle)
            || m.tool_calls()
                .iter()
                .any(|c| c.arguments.contains(needle) || c.name.contains(needle))
    })
}

/// Whether every tool call of `transcript` is followed by exactly its results.
pub fn well_formed(transcript: &[Message]) -> bool {
    let mut pending: Vec<&str> = Vec::new();
    for m in transcript {
        match m {
            Message::Tool(r) => match pending.iter().position(|id| *id == &*r.call_id) {
                Some(at) => {
                    pending.remove(at);
                }
                None => return false,
            },
            other => {
                if !pending.is_empty() {
                    return false;
                }
                pending = other.tool_calls().iter().map(|c| &*c.id).collect();
            }
        }
    }
    pending.is_empty()
}

/// A flag that is set when dropped: tells whether a handler's future was dropped.
pub struct DropFlag(pub Arc<std::sync::atomic::AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}
