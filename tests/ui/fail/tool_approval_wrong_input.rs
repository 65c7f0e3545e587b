use tool_runtime::approval::Approval;
use tool_runtime::{BoxError, Context, Schema, tool};

/// Which service.
#[derive(Schema)]
pub struct Input {
    /// The service.
    pub service_id: String,
}

pub fn needs_ok(_ctx: &Context, _input: &str) -> Result<Approval, BoxError> {
    Ok(Approval::NotRequired)
}

/// Restarts a service.
#[tool(approval = needs_ok)]
pub fn restart(input: Input) -> String {
    input.service_id
}

fn main() {}
