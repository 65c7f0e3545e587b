use tool_runtime::tool;

/// Greets someone.
#[tool]
pub fn greet(who: &str) -> String {
    format!("Hello, {who}")
}

fn main() {}
