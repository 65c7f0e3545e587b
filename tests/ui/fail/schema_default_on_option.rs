use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query {
    #[schema(default = Some(7))]
    pub days: Option<u32>,
}

fn main() {}
