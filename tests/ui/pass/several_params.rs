//! Several described parameters, with constraints and defaults.

use tool_runtime::{Context, IntoTool, tool};

/// Books a room.
#[tool(name = "book-room")]
pub async fn book(
    ctx: Context,
    #[schema(describe = "The room.", pattern = "^[A-Z][0-9]{3}$")] room: String,
    #[schema(describe = "How many people.", range = 1..=12, default = 2)] people: u8,
    #[schema(describe = "A note for the desk.", max_len = 200)] note: Option<String>,
    #[schema(describe = "Equipment.", max_items = 3)] equipment: Vec<String>,
) -> Result<String, std::io::Error> {
    let _ = ctx;
    Ok(format!("{room} {people} {note:?} {equipment:?}"))
}

fn main() {
    let tool = BookRoom.into_tool();
    assert!(tool.declaration_error().is_none());
    assert_eq!(tool.schema()["required"], serde_json::json!(["room", "equipment"]));
}
