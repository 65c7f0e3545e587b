use tool_runtime::approval::Approval;
use tool_runtime::{BoxError, Context, tool};

/// Restarts a service.
#[tool(approval = needs_ok)]
pub fn restart(#[schema(describe = "The service.")] service_id: String) -> String {
    service_id
}

pub fn needs_ok(_ctx: &Context, _input: &String) -> Result<Approval, BoxError> {
    Ok(Approval::NotRequired)
}

fn main() {}
