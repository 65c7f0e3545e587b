use tool_runtime::Schema;

#[derive(Schema)]
pub struct Pair {
    #[schema(pattern = r"^(\w+)-\1$")]
    pub twice: String,
}

fn main() {}
