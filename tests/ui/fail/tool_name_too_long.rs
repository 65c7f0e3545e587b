use tool_runtime::tool;

/// Looks something up.
#[tool(name = "look-up-the-maintenance-window-of-a-service-in-the-calendar-of-the-team")]
pub fn lookup() -> u32 {
    1
}

fn main() {}
