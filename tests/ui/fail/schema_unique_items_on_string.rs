use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(unique_items = true)]
    pub title: String,
}

fn main() {}
