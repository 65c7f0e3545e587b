//! A handler may return a plain value (no `Result`), or nothing at all.

use tool_runtime::{IntoTool, tool};

/// The answer.
#[tool]
pub fn answer() -> u32 {
    42
}

/// Does nothing.
#[tool]
pub async fn nothing() {}

fn main() {
    assert!(Answer.into_tool().declaration_error().is_none());
    assert!(Nothing.into_tool().declaration_error().is_none());
}
