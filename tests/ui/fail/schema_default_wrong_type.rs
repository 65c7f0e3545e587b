use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query {
    #[schema(default = 7)]
    pub name: String,
    #[schema(default = "seven")]
    pub days: u32,
}

fn main() {}
