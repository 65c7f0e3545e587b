use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(example)]
    pub days: u32,
}

fn main() {}
