use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(items(pattern = "^[0-9]+$"))]
    pub scores: Vec<u32>,
}

fn main() {}
