use tool_runtime::tool;

pub struct Operator;

/// Says who is asking.
#[tool]
pub fn whoami(op: &Operator, again: &Operator) -> String {
    let _ = (op, again);
    "an operator".to_owned()
}

fn main() {}
