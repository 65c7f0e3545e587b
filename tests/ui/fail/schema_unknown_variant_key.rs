use tool_runtime::Schema;

#[derive(Schema)]
pub enum Colour {
    #[schema(default)]
    Red,
    Green,
}

fn main() {}
