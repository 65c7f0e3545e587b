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
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// The pinned requirements, part of the environment's name.
const REQUIREMENTS: &str = include_str!("bedrock_requirements.txt");
/// The helper that validates bodies.
const HELPER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/support/bedrock_validate.py"
);

/// What botocore said of one body: `Ok` or its report.
pub type Verdict = Result<(), String>;

/// Validates each `(operation, body)` (`Converse` or `ConverseStream`) for `model_id`, in
/// one run of the helper.
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

/// The provisioned environment's interpreter, made on first use (once per process).
pub fn interpreter() -> Result<PathBuf, String> {
    static ONCE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = ONCE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let exe = std::env::current_exe().map_err(|e| format!("no test binary path: {e}"))?;
    let target = exe
        .ancestors()
        .nth(3)
        .ok_or_else(|| format!("the test binary `{}` is not under target/", exe.display()))?;
    let home = target.join("peers").join(format!(
        "bedrock-python-{:016x}",
        fnv1a(REQUIREMENTS.as_bytes())
    ));
    let python = home.join("bin").join("python");
    if !python.exists() {
        provision(&home)?;
    }
    Ok(python)
}

fn provision(home: &Path) -> Result<(), String> {
    let parent = home.parent().ok_or("the peers' directory has no parent")?;
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
    let name = home
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("bedrock");
    let building = parent.join(format!("{name}.building-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    eprintln!(
        "making the Bedrock tests' Python environment in {}",
        home.display()
    );
    if let Err(e) = make_environment(&building) {
        let _ = std::fs::remove_dir_all(&building);
        return Err(e);
    }
    match std::fs::rename(&building, home) {
        Ok(()) => Ok(()),
        Err(_) if home.join("bin").join("python").exists() => {
            let _ = std::fs::remove_dir_all(&building);
            Ok(())
        }
        Err(e) => Err(format!(
            "cannot move the environment to `{}`: {e}",
            home.display()
        )),
    }
}

fn make_environment(dir: &Path) -> Result<(), String> {
    let run = |command: &mut Command| {
        let output = command
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run `{command:?}`: {e} (Python 3 with venv is needed)"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "`{command:?}` failed (the package registry must be reachable the first \
                 time):\n{}",
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    };
    run(Command::new("python3").arg("-m").arg("venv").arg(dir))?;
    let requirements = dir.join("requirements.txt");
    std::fs::write(&requirements, REQUIREMENTS)
        .map_err(|e| format!("cannot write `{}`: {e}", requirements.display()))?;
    run(Command::new(dir.join("bin").join("python"))
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(&requirements))?;
    run(Command::new(dir.join("bin").join("python")).args(["-c", "import botocore.validate"]))
}

/// FNV-1a: a stable name for the requirements' content.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
