use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query {
    #[schema(min_items = 1)]
    pub name: String,
}

fn main() {}
