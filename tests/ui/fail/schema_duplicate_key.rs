use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query {
    pub id: String,
    #[schema(rename = "id")]
    pub other_id: String,
}

#[derive(Schema)]
#[schema(tag = "kind")]
pub enum Event {
    Created { kind: String },
}

fn main() {}
