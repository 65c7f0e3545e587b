use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(one_of = ["red", 2])]
    pub colour: String,
    #[schema(one_of = "red")]
    pub shade: String,
}

fn main() {}
