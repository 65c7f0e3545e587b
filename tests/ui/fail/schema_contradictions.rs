use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query {
    #[schema(min_len = 10, max_len = 5)]
    pub id: String,
    #[schema(range = 1..=30, max = 10)]
    pub days: u32,
    #[schema(range = 5..5)]
    pub empty: u32,
    #[schema(min_items = 3, max_items = 1)]
    pub tags: Vec<String>,
    #[schema(multiple_of = 0)]
    pub step: u32,
}

fn main() {}
