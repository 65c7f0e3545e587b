use tool_runtime::Schema;

#[derive(Schema)]
pub struct Query {
    #[schema(pattern = "^(yes|no)$")]
    pub flag: bool,
}

fn main() {}
