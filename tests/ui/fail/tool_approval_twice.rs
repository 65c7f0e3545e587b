use tool_runtime::tool;

/// Wipes a disk.
#[tool(approval = always, approval = always)]
pub fn wipe() -> u32 {
    0
}

fn main() {}
