use tool_runtime::tool;

pub struct Operator;

/// Says who is asking.
#[tool]
pub fn whoami(#[context] op: &Operator) -> String {
    let _ = op;
    "an operator".to_owned()
}

fn main() {}
