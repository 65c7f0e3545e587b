use tool_runtime::tool;

/// Looks something up.
#[tool(name = "-lookup")]
pub fn lookup() -> u32 {
    1
}

fn main() {}
