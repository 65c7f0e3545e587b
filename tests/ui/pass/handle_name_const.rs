//! The generated handle: its `NAME`, its visibility, its rustdoc, its derives.

mod tools {
    use tool_runtime::tool;

    /// Finds a window.
    #[tool(name = "lookup-window")]
    pub fn find_window() -> &'static str {
        "tomorrow"
    }

    /// A name that starts with a digit gets a handle prefixed with `Tool`.
    #[tool(name = "3d-render")]
    pub(crate) fn render() -> u8 {
        3
    }
}

use tool_runtime::IntoTool;

fn main() {
    const NAME: &str = tools::LookupWindow::NAME;
    assert_eq!(NAME, "lookup-window");
    assert_eq!(tools::Tool3dRender::NAME, "3d-render");
    let handle = tools::LookupWindow;
    let copy = handle;
    assert_eq!(format!("{copy:?}"), "LookupWindow");
    assert_eq!(handle.into_tool().name(), tools::LookupWindow::NAME);
    assert_eq!(tools::find_window(), "tomorrow");
    let names: Vec<String> = tool_runtime::registry()
        .unwrap_or_default()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["3d-render", "lookup-window"]);
}
