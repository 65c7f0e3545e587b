use tool_runtime::Schema;

pub struct Opaque;

#[derive(Schema)]
pub struct Query {
    pub inner: Opaque,
    pub more: Vec<Opaque>,
}

fn main() {}
