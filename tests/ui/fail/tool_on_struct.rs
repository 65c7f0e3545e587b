use tool_runtime::tool;

/// Not a fn.
#[tool]
pub struct Lookup;

fn main() {}
