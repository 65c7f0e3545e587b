use tool_runtime::{Context, tool};

pub async fn is_admin(_ctx: Context) -> Result<bool, std::io::Error> {
    Ok(true)
}

/// Deletes everything.
#[tool(available = is_admin)]
pub fn wipe() -> u32 {
    0
}

fn main() {}
