//! The Python peers of the MCP tests (the official MCP Python SDK), in the tests' own pinned
//! environment ([`PythonEnv`]), made from `tests/support/mcp/requirements.txt`.

use std::path::PathBuf;

#[path = "../python_env.rs"]
mod python_env;

use python_env::PythonEnv;

const ENV: PythonEnv = PythonEnv {
    used_by: "the MCP tests",
    prefix: "python",
    requirements: include_str!("requirements.txt"),
    requirements_path: "tool-runtime/tests/support/mcp/requirements.txt",
    variable: Some("PYTHON"),
    imports: "import mcp",
};

/// The interpreter to run the Python peers with: `$PYTHON` as it is when set (its owner
/// installed what it needs), else the provisioned environment's.
pub fn interpreter() -> Result<PathBuf, String> {
    ENV.interpreter()
}
