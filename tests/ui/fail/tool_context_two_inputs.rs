use tool_runtime::{Schema, tool};

pub struct Operator;

/// Input of a restart.
#[derive(Schema)]
pub struct RestartInput {
    /// The service to restart.
    pub service_id: String,
}

/// Restart a service now.
#[tool]
pub async fn restart(input: RestartInput, op: Operator) -> String {
    let _ = op;
    input.service_id
}

fn main() {}
