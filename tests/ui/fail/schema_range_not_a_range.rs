use tool_runtime::Schema;

#[derive(Schema)]
pub struct Post {
    #[schema(range = 30)]
    pub days: u32,
    #[schema(range = ..)]
    pub any: u32,
}

fn main() {}
