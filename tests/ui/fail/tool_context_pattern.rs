use tool_runtime::tool;

pub struct Operator {
    pub name: String,
}

/// Says who is asking.
#[tool]
pub fn whoami(Operator { name }: &Operator) -> String {
    name.clone()
}

fn main() {}
