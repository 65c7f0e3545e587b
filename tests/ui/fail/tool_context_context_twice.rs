use tool_runtime::{Context, tool};

/// Tells whether the run was cancelled.
#[tool]
pub fn cancelled(ctx: &Context, again: Context) -> bool {
    ctx.is_cancelled() || again.is_cancelled()
}

fn main() {}
