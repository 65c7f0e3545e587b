use tool_runtime::Schema;

#[derive(Schema)]
#[schema(rename = "post")]
pub struct Post {
    pub title: String,
}

fn main() {}
