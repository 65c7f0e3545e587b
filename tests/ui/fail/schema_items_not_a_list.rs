use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(items = "^[a-z]+$")]
    pub tags: Vec<String>,
}

fn main() {}
