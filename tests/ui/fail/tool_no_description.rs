use tool_runtime::tool;

#[tool]
pub fn lookup() -> u32 {
    1
}

fn main() {}
