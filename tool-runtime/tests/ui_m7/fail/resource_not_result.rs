use tool_runtime::mcp::resource;
use tool_runtime::Context;

#[resource(uri = "docs://guide")]
async fn guide(_ctx: Context) -> String {
    String::new()
}

fn main() {}
