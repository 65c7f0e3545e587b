use tool_runtime::Schema;

#[derive(Schema)]
pub enum Never {}

fn main() {}
