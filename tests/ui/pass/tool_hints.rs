use tool_runtime::{IntoTool, Schema, tool};

#[derive(Schema, serde::Serialize)]
pub struct Window {
    /// When it starts.
    pub starts_at: String,
}

/// Looks a window up.
#[tool(
    name = "lookup-window",
    title = "Look up a window",
    read_only,
    idempotent,
    open_world = false
)]
pub fn lookup() -> Window {
    Window {
        starts_at: "2026-12-01T02:00:00Z".to_owned(),
    }
}

/// Restarts a service.
#[tool(name = "restart-service", destructive, read_only = false)]
pub async fn restart() -> Result<String, std::io::Error> {
    Ok("restarted".to_owned())
}

fn main() {
    let tool = LookupWindow.into_tool();
    assert!(tool.declaration_error().is_none());
    assert!(tool.output_schema().is_some());
    assert_eq!(tool.annotations().read_only, Some(true));
    assert!(RestartService.into_tool().output_schema().is_none());
}
