use tool_runtime::Schema;

#[derive(Schema)]
pub struct Password {
    #[schema(pattern = "^(?=.*\\d)[a-z\\d]{8,}$")]
    pub secret: String,
}

fn main() {}
