//! The Python peer of the Bedrock request checks (V5): botocore, in a virtual environment
//! under the build's `target/peers/`, made on first use from the pinned
//! `tests/support/bedrock_requirements.txt` and reused after, and the helper
//! `bedrock_validate.py` that checks request bodies with botocore's ParamValidator against
//! its `bedrock-runtime` service model. Nothing is installed into the system Python.
//!
//! Several test binaries may provision at once: each builds in a directory of its own and
//! renames it into place, so the first to finish wins and the others use its environment.

#![allow(dead_code, unreachable_pub)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[path = "python_env.rs"]
mod python_env;

use python_env::PythonEnv;

/// botocore, pinned; the requirements' content names the environment.
const ENV: PythonEnv = PythonEnv {
    used_by: "the Bedrock tests",
    prefix: "bedrock-python",
    requirements: include_str!("bedrock_requirements.txt"),
    requirements_path: "tool-runtime/tests/support/bedrock_requirements.txt",
    variable: None,
    imports: "import botocore.validate",
};
/// The helper that validates bodies.
const HELPER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/support/bedrock_validate.py"
);

/// What botocore said of one body: `Ok` or its report.
pub type Verdict = Result<(), String>;

/// Validates each `(operation, body)` (`Converse` or `ConverseStream`) for `model_id`, in
/// one run of the helper. `output:Converse` checks an answer against the operation's output
/// shape, `event:<kind>` a ConverseStream event's payload (`event:contentBlockDelta`) against its
/// shape.
pub fn validate(model_id: &str, bodies: &[(&str, Value)]) -> Result<Vec<Verdict>, String> {
    let python = interpreter()?;
    let mut input = String::new();
    for (operation, body) in bodies {
        let line = json!({"operation": operation, "modelId": model_id, "body": body});
        input.push_str(&line.to_string());
        input.push('\n');
    }
    let mut child = Command::new(&python)
        .arg(HELPER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run the botocore helper: {e}"))?;
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(input.as_bytes())
        .map_err(|e| format!("cannot write to the botocore helper: {e}"))?;
    let output = child
        .wait_with_output()
        .map_err(|e| format!("the botocore helper failed: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "the botocore helper failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let verdict: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
            Ok(if verdict["ok"] == true {
                Ok(())
            } else {
                Err(verdict["errors"].as_str().unwrap_or("no report").to_owned())
            })
        })
        .collect()
}

/// The provisioned environment's interpreter, made on first use.
pub fn interpreter() -> Result<PathBuf, String> {
    ENV.interpreter()
}

/// pydantic-ai's Bedrock schema transformer, pinned; the requirements' content names the
/// environment (V4).
const DIALECT_ENV: PythonEnv = PythonEnv {
    used_by: "the Bedrock dialect tests",
    prefix: "bedrock-dialect-python",
    requirements: include_str!("bedrock_dialect_requirements.txt"),
    requirements_path: "tool-runtime/tests/support/bedrock_dialect_requirements.txt",
    variable: None,
    imports: "import pydantic_ai.providers.bedrock",
};
/// The helper that runs pydantic-ai's transformer.
const DIALECT_HELPER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/support/bedrock_dialect.py"
);

/// What pydantic-ai makes of each schema: `{"default", "inlined", "profile"}` (see
/// `bedrock_dialect.py`), in one run of the helper.
pub fn pydantic_ai(schemas: &[Value]) -> Result<Vec<Value>, String> {
    let python = DIALECT_ENV.interpreter()?;
    let mut input = String::new();
    for schema in schemas {
        input.push_str(&json!({ "schema": schema }).to_string());
        input.push('\n');
    }
    let mut child = Command::new(&python)
        .arg(DIALECT_HELPER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the pydantic-ai helper: {e}"))?;
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(input.as_bytes())
        .map_err(|e| format!("cannot write to the pydantic-ai helper: {e}"))?;
    let output = child
        .wait_with_output()
        .map_err(|e| format!("the pydantic-ai helper failed: {e}"))?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let answer: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
            if answer["ok"] == true {
                Ok(answer)
            } else {
                Err(answer["error"].as_str().unwrap_or("no report").to_owned())
            }
        })
        .collect()
}
