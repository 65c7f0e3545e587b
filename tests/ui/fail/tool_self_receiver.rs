use tool_runtime::tool;

pub struct Service;

impl Service {
    /// Looks something up.
    #[tool]
    pub fn lookup(&self) -> u32 {
        1
    }
}

fn main() {}
