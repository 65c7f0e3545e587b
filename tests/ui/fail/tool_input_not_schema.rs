use tool_runtime::tool;

pub struct Query {
    pub id: String,
}

/// Looks something up.
#[tool]
pub fn lookup(input: Query) -> String {
    input.id
}

fn main() {}
