use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query {
    #[schema(min_len = 1)]
    pub count: u32,
}

fn main() {}
