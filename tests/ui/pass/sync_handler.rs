//! A plain (not async) fn is a handler.

use tool_runtime::{IntoTool, Schema, tool};

/// Two numbers.
#[derive(Schema)]
pub struct Pair {
    /// The first.
    pub a: i64,
    /// The second.
    pub b: i64,
}

/// Adds two numbers.
#[tool]
pub fn add(input: Pair) -> Result<i64, std::num::TryFromIntError> {
    Ok(input.a + input.b)
}

fn main() {
    assert!(Add.into_tool().declaration_error().is_none());
    assert_eq!(add(Pair { a: 1, b: 2 }).ok(), Some(3));
}
