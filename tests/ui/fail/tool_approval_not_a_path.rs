use tool_runtime::tool;

/// Wipes a disk.
#[tool(approval = "always")]
pub fn wipe() -> u32 {
    0
}

/// Formats a disk.
#[tool(approval)]
pub fn format() -> u32 {
    0
}

fn main() {}
