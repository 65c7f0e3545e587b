//! `#[tool(handle = …)]` names the handle, so an input type can have the name the handle
//! would have had.

use tool_runtime::{IntoTool, Schema, tool};

/// Input of `add-note`.
#[derive(Schema)]
pub struct AddNote {
    /// The note.
    pub text: String,
}

/// Add a note.
#[tool(name = "add-note", handle = AddNoteTool)]
pub async fn add_note(input: AddNote) -> String {
    input.text
}

fn main() {
    assert_eq!(AddNoteTool::NAME, "add-note");
    assert!(AddNoteTool.into_tool().declaration_error().is_none());
}
