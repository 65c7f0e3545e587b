use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(rename = "")]
    pub title: String,
}

fn main() {}
