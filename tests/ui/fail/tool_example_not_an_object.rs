// Q3: an example that is not JSON, or not one object of arguments, fails the build at the example.
use tool_runtime::tool;

/// Finds the weather in a city.
#[tool(examples = [r#"{"city": "Paris""#, r#"["Paris"]"#, 3])]
pub fn weather(
    #[schema(describe = "The city.")] city: String,
) -> String {
    city
}

fn main() {}
