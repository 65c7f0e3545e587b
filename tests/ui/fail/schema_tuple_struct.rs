use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query(pub String, pub u32);

fn main() {}
