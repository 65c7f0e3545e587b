use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(one_of = [])]
    pub colour: String,
}

fn main() {}
