use tool_runtime::tool;

/// Doubles a number.
#[tool]
pub fn double(n: u32) -> u32 {
    n * 2
}

fn main() {}
