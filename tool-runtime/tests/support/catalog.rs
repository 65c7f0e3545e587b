//! The deferred tools of the catalog tests (`catalog_q1*.rs`, Q1).
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tool_runtime::{Context, Tool};

/// Any arguments, as an object.
type Args = BTreeMap<String, serde_json::Value>;

/// A deferred tool named `name`, described by `description`, answering with its arguments and
/// counting its runs; hidden from every caller when `offered` is false.
pub fn deferred(name: &str, description: &str, offered: bool) -> (Tool, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let tool = Tool::builder(name, description)
        .deferred_loading()
        .handler(move |_ctx: Context, args: Args| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, std::convert::Infallible>(args) }
        })
        .available_fn(move |_ctx: &Context| Ok::<_, std::convert::Infallible>(offered))
        .build();
    (tool, runs)
}
