use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(items(min_items = 1, max_lenn = 3))]
    pub tags: Vec<String>,
    #[schema(items(items(min_len = 1)))]
    pub grid: Vec<Vec<String>>,
}

fn main() {}
