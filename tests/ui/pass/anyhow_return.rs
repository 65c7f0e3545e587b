//! `anyhow::Error`, and `Result` aliases, work as handler errors.

use tool_runtime::{Context, IntoTool, tool};

/// Fails with anyhow.
#[tool]
pub async fn flaky(_ctx: Context) -> anyhow::Result<bool> {
    Err(anyhow::anyhow!("not today"))
}

/// Reads a file.
#[tool]
pub fn read(#[schema(describe = "The path.")] path: String) -> std::io::Result<String> {
    std::fs::read_to_string(path)
}

fn main() {
    assert!(Flaky.into_tool().declaration_error().is_none());
    assert!(Read.into_tool().declaration_error().is_none());
}
