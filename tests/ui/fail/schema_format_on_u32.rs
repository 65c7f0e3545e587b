use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query {
    #[schema(format = "date")]
    pub day: u32,
}

fn main() {}
