use tool_runtime::tool;

/// Add a note.
#[tool(name = "add-note", handle = tools::AddNoteTool)]
pub fn add_note() -> String {
    String::new()
}

fn main() {}
