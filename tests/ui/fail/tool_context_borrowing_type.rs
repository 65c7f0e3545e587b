use tool_runtime::tool;

pub struct Operator<'a> {
    pub name: &'a str,
}

/// Says who is asking.
#[tool]
pub fn whoami(op: &Operator<'_>) -> String {
    op.name.to_owned()
}

fn main() {}
