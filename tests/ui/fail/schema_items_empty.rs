use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(items())]
    pub tags: Vec<String>,
}

fn main() {}
