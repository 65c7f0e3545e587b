//! The benchmark harness of tool-runtime: one tool, declared the way a user of each
//! framework declares it, called from (tool name, argument bytes) to the model-facing string.
//!
//! Every framework gets the same input — a struct of six fields (two strings with length
//! limits, an integer with a range, an optional float, an enum, a list of strings) — the same
//! handler body ([`shared::triage`]) and the same JSON arguments ([`args`]).
//!
//! - [`ours`]: `#[derive(Schema)]` + `#[tool]`, called through `Tool::invoke` (validation
//!   included).
//! - [`baseline`]: the floor a framework can reach: `serde_json::from_slice` into the struct,
//!   the same checks written by hand, a direct call, `serde_json::to_string` of the result.
//! - [`mcp`]: rmcp's `#[tool_router]`/`#[tool]` with schemars, called through
//!   `ToolRouter::call` (the limits are rendered into the schema, not enforced).
//! - [`rig`]: rig's `#[rig_tool]`, called through rig-agent's `ToolSet::execute` (no limits).

#![allow(missing_docs)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context as TaskContext, Poll, Waker};

pub mod baseline;
pub mod catalog;
pub mod counting;
#[cfg(feature = "rmcp")]
pub mod mcp;
pub mod ours;
#[cfg(feature = "rig")]
pub mod rig;
pub mod runloop;

/// The tool's name in every framework.
pub const TOOL_NAME: &str = "triage-ticket";

/// The JSON arguments every framework is called with.
pub mod args {
    /// Valid arguments: every field set.
    pub const VALID: &[u8] = br#"{"title":"Crash when saving a file","reporter":"ada","priority":3,"estimate_hours":2.5,"kind":"bug","labels":["editor","storage"]}"#;

    /// Arguments with three violations: an empty title (`minLength`), a priority above the
    /// range (`maximum`) and an unknown kind (`enum`). rmcp, rig and serde see only the last
    /// one: they do not enforce the limits, and stop at the first error.
    pub const INVALID: &[u8] = br#"{"title":"","reporter":"ada","priority":9,"estimate_hours":2.5,"kind":"urgent","labels":["editor","storage"]}"#;
}

/// What every framework's tool shares: the result type and the handler body.
pub mod shared {
    use serde::Serialize;

    /// The handler's result.
    #[derive(Debug, Serialize)]
    #[cfg_attr(feature = "rmcp", derive(schemars::JsonSchema))]
    pub struct Triage {
        /// The queue line.
        pub summary: String,
        /// Priority times the estimate.
        pub score: f64,
        /// How many labels the ticket has.
        pub labels: usize,
    }

    /// The handler body every framework runs: it returns at once.
    pub fn triage(
        title: &str,
        reporter: &str,
        priority: u8,
        estimate_hours: Option<f64>,
        kind: &str,
        labels: &[String],
    ) -> Triage {
        Triage {
            summary: format!("[{kind}] {title} ({reporter})"),
            score: f64::from(priority) * estimate_hours.unwrap_or(1.0),
            labels: labels.len(),
        }
    }

    /// The model-facing text of the valid call, as JSON (key order aside).
    pub fn expected_valid() -> serde_json::Value {
        serde_json::json!({
            "summary": "[bug] Crash when saving a file (ada)",
            "score": 7.5,
            "labels": 2
        })
    }
}

/// Drives a future to completion on this thread with a no-op waker: every framework's call
/// future is polled the same way, and none of them waits on anything.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = TaskContext::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::yield_now();
    }
}

/// Peak resident set size of this process so far, in bytes (`VmHWM`), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    proc_status_kib("VmHWM:").map(|k| k * 1024)
}

/// Resident set size of this process now, in bytes (`VmRSS`), if known.
pub fn rss_bytes() -> Option<u64> {
    proc_status_kib("VmRSS:").map(|k| k * 1024)
}

fn proc_status_kib(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}
