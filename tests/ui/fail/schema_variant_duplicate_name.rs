use tool_runtime::Schema;

#[derive(Schema)]
#[schema(rename_all = "lowercase")]
pub enum Colour {
    Red,
    #[schema(rename = "red")]
    Crimson,
}

fn main() {}
