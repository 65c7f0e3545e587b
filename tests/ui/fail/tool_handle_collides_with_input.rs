use tool_runtime::{Schema, tool};

/// Input of `add-note`, named like the handle `#[tool]` generates for it.
#[derive(Schema)]
pub struct AddNote {
    /// The note.
    pub text: String,
}

/// Add a note.
#[tool(name = "add-note")]
pub async fn add_note(input: AddNote) -> String {
    input.text
}

fn main() {}
