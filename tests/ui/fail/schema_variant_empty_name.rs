use tool_runtime::Schema;

#[derive(Schema)]
pub enum Colour {
    #[schema(rename = "")]
    Red,
    Green,
}

fn main() {}
