use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(default(7))]
    pub days: u32,
}

fn main() {}
