use tool_runtime::tool;

/// Adds three numbers.
#[tool]
pub fn add(
    (a, b): (i64, i64),
    #[schema(describe = "The third number.")] c: i64,
) -> i64 {
    a + b + c
}

fn main() {}
