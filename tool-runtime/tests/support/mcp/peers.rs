//! The Python peers of the MCP tests, provisioned by the tests themselves: a virtual
//! environment under the build's `target/` directory, made on first use from the pinned
//! `tests/support/mcp/requirements.txt` and reused after. Nothing is installed into the system
//! Python, and nothing needs to be run before `cargo test`.
//!
//! Several test binaries may provision at once: each builds in a directory of its own and
//! renames it into place, so the first to finish wins and the others use its environment.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The pinned requirements, part of the environment's name: a change makes a new one.
const REQUIREMENTS: &str = include_str!("requirements.txt");

/// The interpreter to run the Python peers with: `$PYTHON` as it is when set (its owner
/// installed what it needs), else the provisioned environment's. The error says what is
/// missing and how to get it.
pub fn interpreter() -> Result<PathBuf, String> {
    if let Some(python) = std::env::var_os("PYTHON") {
        let python = PathBuf::from(python);
        return if imports_mcp(&python) {
            Ok(python)
        } else {
            Err(format!(
                "PYTHON is set to `{}`, which cannot import the MCP Python SDK: unset PYTHON to \
                 let the tests make their own environment, or install the packages of \
                 tool-runtime/tests/support/mcp/requirements.txt for it",
                python.display()
            ))
        };
    }
    let home = environment_dir()?;
    let python = home.join("bin").join("python");
    if python.exists() {
        return Ok(python);
    }
    provision(&home)?;
    Ok(python)
}

/// `target/peers/python-<hash of the requirements>`, found from the test binary's path
/// (`target/<profile>/deps/<binary>`).
fn environment_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the test binary's path to place the peers: {e}"))?;
    let target = exe
        .ancestors()
        .nth(3)
        .ok_or_else(|| format!("the test binary `{}` is not under target/", exe.display()))?;
    Ok(target
        .join("peers")
        .join(format!("python-{:016x}", fnv1a(REQUIREMENTS.as_bytes()))))
}

/// Makes the environment in a directory of this process's, then renames it to `home`.
fn provision(home: &Path) -> Result<(), String> {
    let base = "python3";
    let parent = home.parent().ok_or("the peers' directory has no parent")?;
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
    let building = parent.join(format!(
        "{}.building-{}",
        home.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("python"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&building);
    eprintln!(
        "making the MCP tests' Python environment in {} \
         (once; pinned by tests/support/mcp/requirements.txt)",
        home.display()
    );
    let result = make_environment(base, &building);
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&building);
        return Err(e);
    }
    match std::fs::rename(&building, home) {
        Ok(()) => Ok(()),
        // Another test binary finished first: use its environment.
        Err(_) if home.join("bin").join("python").exists() => {
            let _ = std::fs::remove_dir_all(&building);
            Ok(())
        }
        Err(e) => Err(format!(
            "cannot move the Python environment into place at `{}`: {e}",
            home.display()
        )),
    }
}

fn make_environment(base: &str, dir: &Path) -> Result<(), String> {
    let missing_python = |e: std::io::Error| {
        format!(
            "the MCP tests need Python 3 to run the official MCP Python SDK, and `{base}` cannot \
             be run ({e}): install Python 3 (with its venv module), or set PYTHON to an \
             interpreter that has the packages of \
             tool-runtime/tests/support/mcp/requirements.txt"
        )
    };
    let venv = run(Command::new(base).arg("-m").arg("venv").arg(dir)).map_err(missing_python)?;
    if !venv.status.success() {
        return Err(format!(
            "`{base} -m venv` failed, so the MCP tests cannot make their Python environment: \
             install Python's venv module (on Debian and Ubuntu, the package python3-venv), or \
             set PYTHON to an interpreter that has the packages of \
             tool-runtime/tests/support/mcp/requirements.txt\n{}",
            String::from_utf8_lossy(&venv.stderr).trim()
        ));
    }
    let python = dir.join("bin").join("python");
    let requirements = dir.join("requirements.txt");
    std::fs::write(&requirements, REQUIREMENTS)
        .map_err(|e| format!("cannot write `{}`: {e}", requirements.display()))?;
    let install = run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(&requirements))
    .map_err(|e| format!("cannot run pip in the new environment: {e}"))?;
    if !install.status.success() {
        return Err(format!(
            "installing the MCP Python SDK into the tests' environment failed (the package \
             registry must be reachable the first time; the environment is reused after):\n{}",
            String::from_utf8_lossy(&install.stderr).trim()
        ));
    }
    if !imports_mcp(&python) {
        return Err("the MCP Python SDK was installed but cannot be imported".to_owned());
    }
    Ok(())
}

fn run(command: &mut Command) -> std::io::Result<std::process::Output> {
    command.stdin(Stdio::null()).output()
}

fn imports_mcp(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", "import mcp"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// FNV-1a: a stable name for the requirements' content.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
