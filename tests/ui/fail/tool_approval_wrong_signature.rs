use tool_runtime::{Context, Schema, tool};

/// Which service.
#[derive(Schema)]
pub struct Input {
    /// The service.
    pub service_id: String,
}

pub fn needs_ok(_ctx: &Context, input: &Input) -> bool {
    input.service_id.starts_with("prod-")
}

/// Restarts a service.
#[tool(approval = needs_ok)]
pub fn restart(input: Input) -> String {
    input.service_id
}

fn main() {}
