use tool_runtime::mcp::resource;

#[resource(uri = "docs://guide")]
struct Guide;

fn main() {}
