use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(items(min_len = 1, range = 1..=9))]
    pub tags: Option<Vec<String>>,
}

fn main() {}
