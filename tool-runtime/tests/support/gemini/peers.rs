//! Google's own definitions of the Gemini API, provisioned by the tests themselves (V5): a
//! virtual environment under the build's `target/peers/` directory, made on first use from
//! the pinned `tests/support/gemini/requirements.txt` and reused after. Nothing is installed
//! into the system Python, and nothing needs to be run before `cargo test`.
//!
//! Several test binaries may provision at once: each builds in a directory of its own and
//! renames it into place, so the first to finish wins and the others use its environment.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The pinned requirements, part of the environment's name: a change makes a new one.
const REQUIREMENTS: &str = include_str!("requirements.txt");

/// What the environment must import.
const IMPORTS: &str = "import google.ai.generativelanguage_v1beta, google.genai.types, anthropic";

/// The interpreter that has Google's packages: `$GEMINI_PYTHON` as it is when set, else the
/// provisioned environment's. The error says what is missing and how to get it.
pub fn interpreter() -> Result<PathBuf, String> {
    if let Some(python) = std::env::var_os("GEMINI_PYTHON") {
        let python = PathBuf::from(python);
        return if imports(&python) {
            Ok(python)
        } else {
            Err(format!(
                "GEMINI_PYTHON is set to `{}`, which cannot import Google's packages: unset it \
                 to let the tests make their own environment, or install the packages of \
                 tool-runtime/tests/support/gemini/requirements.txt for it",
                python.display()
            ))
        };
    }
    // The tests of one binary run on threads of one process: one of them provisions, the
    // others wait for it.
    static PROVISIONING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = PROVISIONING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let home = environment_dir()?;
    let python = home.join("bin").join("python");
    if python.exists() {
        return Ok(python);
    }
    provision(&home)?;
    Ok(python)
}

/// `target/peers/gemini-python-<hash of the requirements>`, found from the test binary's
/// path (`target/<profile>/deps/<binary>`).
fn environment_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the test binary's path to place the peers: {e}"))?;
    let target = exe
        .ancestors()
        .nth(3)
        .ok_or_else(|| format!("the test binary `{}` is not under target/", exe.display()))?;
    Ok(target.join("peers").join(format!(
        "gemini-python-{:016x}",
        fnv1a(REQUIREMENTS.as_bytes())
    )))
}

/// Makes the environment in a directory of this process's, then renames it to `home`.
fn provision(home: &Path) -> Result<(), String> {
    let parent = home.parent().ok_or("the peers' directory has no parent")?;
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
    let name = home
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("gemini");
    let building = parent.join(format!("{name}.building-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    eprintln!(
        "making the Gemini tests' Python environment in {} (once; pinned by \
         tests/support/gemini/requirements.txt)",
        home.display()
    );
    if let Err(e) = make_environment(&building) {
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

fn make_environment(dir: &Path) -> Result<(), String> {
    let venv = run(Command::new("python3").arg("-m").arg("venv").arg(dir)).map_err(|e| {
        format!(
            "the Gemini tests need Python 3 to check requests against Google's own types, and \
             `python3` cannot be run ({e}): install Python 3 with its venv module, or set \
             GEMINI_PYTHON to an interpreter that has the packages of \
             tool-runtime/tests/support/gemini/requirements.txt"
        )
    })?;
    if !venv.status.success() {
        return Err(format!(
            "`python3 -m venv` failed (on Debian and Ubuntu, install python3-venv):\n{}",
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
            "installing Google's packages into the tests' environment failed (the package \
             registry must be reachable the first time; the environment is reused after):\n{}",
            String::from_utf8_lossy(&install.stderr).trim()
        ));
    }
    if !imports(&python) {
        return Err("Google's packages were installed but cannot be imported".to_owned());
    }
    Ok(())
}

fn run(command: &mut Command) -> std::io::Result<std::process::Output> {
    command.stdin(Stdio::null()).output()
}

fn imports(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", IMPORTS])
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
