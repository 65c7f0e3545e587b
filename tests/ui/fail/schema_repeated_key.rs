use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query {
    #[schema(min_len = 1)]
    #[schema(min_len = 2)]
    pub id: String,
}

fn main() {}
