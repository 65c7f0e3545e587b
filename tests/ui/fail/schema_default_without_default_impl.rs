use tool_runtime::Schema;

#[derive(Schema)]
pub enum Mode {
    Fast,
    Safe,
}

#[derive(Schema)]
pub struct Query {
    #[schema(default)]
    pub mode: Mode,
}

fn main() {}
