use tool_runtime::tool;

/// Shouts a word.
#[tool]
pub fn shout(#[schema(describe = "The word.")] word: &str) -> String {
    word.to_uppercase()
}

fn main() {}
