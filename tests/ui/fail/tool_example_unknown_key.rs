// Q3: an example that passes an argument the tool does not take fails the build at the example.
use tool_runtime::tool;

/// Finds the weather in a city.
#[tool(examples = [r#"{"city": "Paris"}"#, r#"{"town": "Lyon"}"#])]
pub fn weather(
    #[schema(describe = "The city.")] city: String,
) -> String {
    city
}

fn main() {}
