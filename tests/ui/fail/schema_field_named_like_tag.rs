use tool_runtime::Schema;

#[derive(Schema)]
#[schema(tag = "kind")]
pub enum Shape {
    Circle { radius: f64, kind: String },
}

fn main() {}
