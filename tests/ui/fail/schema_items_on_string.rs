use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(items(max_len = 32))]
    pub title: String,
}

fn main() {}
