use tool_runtime::tool;

/// Wipes a cache.
#[tool(name = "wipe-cache", read_only, destructive)]
pub fn wipe() -> String {
    "wiped".to_owned()
}

fn main() {}
