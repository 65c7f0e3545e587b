use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query {
    #[schema(pattern = "^[a-z+$")]
    pub id: String,
}

fn main() {}
