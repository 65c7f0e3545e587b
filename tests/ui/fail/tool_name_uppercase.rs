use tool_runtime::tool;

/// Looks something up.
#[tool(name = "Lookup-Window")]
pub fn lookup() -> u32 {
    1
}

fn main() {}
