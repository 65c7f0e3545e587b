use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query {
    #[schema(one_of = ["1", "2"])]
    pub level: i64,
}

fn main() {}
