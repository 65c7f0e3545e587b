//! `crate = path`: the generated code names its support through another path to the facade.

mod facade {
    pub use tool_runtime::*;
}

use facade::{Context, IntoTool, Schema, tool};

/// A query.
#[derive(Schema)]
#[schema(crate = crate::facade)]
pub struct Query {
    /// What to look for.
    #[schema(min_len = 1)]
    pub text: String,
}

/// Searches.
#[tool(crate = crate::facade)]
pub async fn search(_ctx: Context, input: Query) -> Result<String, facade::BoxError> {
    Ok(input.text)
}

fn main() {
    let tool = Search.into_tool();
    assert!(tool.declaration_error().is_none());
    assert_eq!(tool.name(), "search");
}
