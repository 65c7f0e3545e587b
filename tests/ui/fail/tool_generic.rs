use tool_runtime::{Schema, tool};

/// Echoes its input.
#[tool]
pub fn echo<T: Schema + serde::Serialize>(input: T) -> T {
    input
}

fn main() {}
