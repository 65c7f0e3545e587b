use tool_runtime::tool;

/// Restarts a service.
#[tool(aproval = always, sequental, handel = RestartTool)]
pub fn restart() -> String {
    "restarting".to_owned()
}

fn main() {}
