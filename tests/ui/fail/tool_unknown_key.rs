use tool_runtime::tool;

/// Looks something up.
#[tool(nmae = "lookup", avail = x)]
pub fn lookup() -> u32 {
    1
}

fn main() {}
