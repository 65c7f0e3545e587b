//! A handler may borrow its context.

use tool_runtime::{Context, IntoTool, tool};

/// Says hello.
#[tool]
pub async fn hello(ctx: &Context) -> Result<String, tool_runtime::MissingExtension> {
    ctx.require::<String>().cloned()
}

fn main() {
    assert!(Hello.into_tool().declaration_error().is_none());
}
