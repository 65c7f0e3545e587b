use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(example = "seven")]
    pub days: u32,
}

fn main() {}
