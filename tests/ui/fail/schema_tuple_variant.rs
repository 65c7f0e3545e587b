use tool_runtime::Schema;

#[derive(Schema)]
pub enum Shape {
    Circle { radius: f64 },
    Square(f64),
}

fn main() {}
