use tool_runtime::Schema;

#[derive(Schema)]
pub struct Window {
    #[schema(min = 10, max = 5)]
    pub days: u32,
    #[schema(exclusive_min = 1.5, exclusive_max = 1.5)]
    pub ratio: f64,
}

fn main() {}
