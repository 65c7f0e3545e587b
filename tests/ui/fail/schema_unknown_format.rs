use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query {
    #[schema(format = "phone")]
    pub phone: String,
}

fn main() {}
