use tool_runtime::tool;

/// Wipes a disk.
#[tool(approval = allways)]
pub fn wipe() -> u32 {
    0
}

/// Formats a disk.
#[tool(approval = Always)]
pub fn format() -> u32 {
    0
}

fn main() {}
