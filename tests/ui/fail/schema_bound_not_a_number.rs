use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(min = "5")]
    pub days: u32,
    #[schema(max = 1000000000000000000000000000000000000000000)]
    pub big: u64,
}

fn main() {}
