use tool_runtime::tool;

/// Looks something up.
#[tool]
pub fn _lookup() -> u32 {
    1
}

fn main() {}
