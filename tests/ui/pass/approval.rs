//! `approval = always` and `approval = path`, with an async or a plain predicate over the
//! tool's input (H1).

use tool_runtime::approval::Approval;
use tool_runtime::{BoxError, Context, IntoTool, Schema, tool};

/// Which service to restart.
#[derive(Schema)]
pub struct RestartInput {
    /// The service.
    pub service_id: String,
}

/// Restart a service now.
#[tool(name = "restart-service", approval = restart_needs_ok)]
pub async fn restart(_ctx: Context, input: RestartInput) -> Result<String, BoxError> {
    Ok(format!("{} restarted", input.service_id))
}

pub async fn restart_needs_ok(_ctx: &Context, input: &RestartInput) -> Result<Approval, BoxError> {
    Ok(if input.service_id.starts_with("prod-") {
        Approval::required("it serves production traffic")
    } else {
        Approval::NotRequired
    })
}

/// Stop a service now.
#[tool(approval = stop_needs_ok)]
pub fn stop(input: RestartInput) -> String {
    input.service_id
}

pub fn stop_needs_ok(_ctx: &Context, _input: &RestartInput) -> Result<Approval, std::io::Error> {
    Ok(Approval::required("stopping is final"))
}

/// Wipe a disk.
#[tool(approval = always)]
pub fn wipe(#[schema(describe = "The disk.")] disk: String) -> String {
    disk
}

fn main() {
    for tool in [RestartService.into_tool(), Stop.into_tool(), Wipe.into_tool()] {
        assert!(tool.declaration_error().is_none(), "{:?}", tool.declaration_error());
        assert!(tool.requires_approval());
    }
}
