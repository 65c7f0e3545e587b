use tool_runtime::{Context, tool};

pub fn is_admin(_ctx: &Context) -> bool {
    true
}

/// Deletes everything.
#[tool(available = is_admin)]
pub fn wipe() -> u32 {
    0
}

fn main() {}
