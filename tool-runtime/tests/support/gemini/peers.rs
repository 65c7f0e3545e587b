//! Google's own definitions of the Gemini API (and the anthropic SDK's schema transform), in
//! the tests' own pinned environment ([`PythonEnv`]), made from
//! `tests/support/gemini/requirements.txt` (V5).

use std::path::PathBuf;

#[path = "../python_env.rs"]
mod python_env;

use python_env::PythonEnv;

const ENV: PythonEnv = PythonEnv {
    used_by: "the Gemini tests",
    prefix: "gemini-python",
    requirements: include_str!("requirements.txt"),
    requirements_path: "tool-runtime/tests/support/gemini/requirements.txt",
    variable: Some("GEMINI_PYTHON"),
    imports: "import google.ai.generativelanguage_v1beta, google.genai.types, anthropic",
};

/// The interpreter that has Google's packages: `$GEMINI_PYTHON` as it is when set, else the
/// provisioned environment's.
pub fn interpreter() -> Result<PathBuf, String> {
    ENV.interpreter()
}
