use std::cell::Cell;

use tool_runtime::tool;

/// Counts calls.
#[tool]
pub async fn count(calls: &Cell<u32>) -> u32 {
    calls.set(calls.get() + 1);
    calls.get()
}

fn main() {}
