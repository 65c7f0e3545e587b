use tool_runtime::Schema;

#[derive(Schema)]
#[schema(tag = "kind")]
pub struct Post {
    pub title: String,
}

fn main() {}
