use tool_runtime::tool;

/// Adds two numbers.
#[tool]
pub fn add(a: i64, #[schema(describe = "The second number.")] b: i64, c: i64) -> i64 {
    a + b + c
}

fn main() {}
