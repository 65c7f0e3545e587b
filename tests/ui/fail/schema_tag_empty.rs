use tool_runtime::Schema;

#[derive(Schema)]
#[schema(tag = "")]
pub enum Shape {
    Circle { radius: f64 },
}

fn main() {}
