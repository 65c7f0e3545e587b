use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(items(min_len = 5, max_len = 2, pattern = "(?<=a)b", format = "color"))]
    pub tags: Vec<String>,
    #[schema(items(range = 9..=1, multiple_of = -2))]
    pub scores: Vec<i32>,
}

fn main() {}
