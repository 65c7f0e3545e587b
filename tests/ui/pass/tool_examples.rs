// Q1, Q3: a deferred-loading tool with examples that fit its input compiles, and its tool
// carries both.
use tool_runtime::{IntoTool, tool};

/// Finds the weather in a city.
#[tool(deferred_loading, examples = [r#"{"city": "Paris"}"#, r#"{"city": "Lyon", "days": 3}"#])]
pub fn weather(
    #[schema(describe = "The city.")] city: String,
    #[schema(describe = "How many days ahead.")] days: Option<u32>,
) -> String {
    format!("{city} {days:?}")
}

fn main() {
    let tool = Weather.into_tool();
    assert!(tool.declaration_error().is_none());
    assert!(tool.is_deferred_loading());
    assert_eq!(tool.examples().len(), 2);
}
