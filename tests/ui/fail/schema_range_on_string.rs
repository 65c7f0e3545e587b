use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query {
    #[schema(range = 1..=30)]
    pub name: String,
}

fn main() {}
