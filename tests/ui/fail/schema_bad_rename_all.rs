use tool_runtime::Schema;

#[derive(Schema)]
#[schema(rename_all = "camel_case")]
pub struct Query {
    pub service_id: String,
}

fn main() {}
