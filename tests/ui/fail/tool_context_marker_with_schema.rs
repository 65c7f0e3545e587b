use tool_runtime::tool;

#[derive(Clone)]
pub struct Region(pub String);

/// Lists the services of a region.
#[tool]
pub fn services(#[context] #[schema(describe = "The region.")] region: Region) -> String {
    region.0
}

fn main() {}
