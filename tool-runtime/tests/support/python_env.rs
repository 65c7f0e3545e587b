//! A pinned Python environment of the tests' own (the MCP Python SDK, Google's and AWS's
//! definitions of their APIs): a virtual environment under the build's `target/peers/`, named
//! after its requirements' content, made on first use and reused after. Nothing is installed
//! into the system Python, and nothing needs to be run before `cargo test`.
//!
//! The tests of one binary run on threads of one process: one of them provisions, the others
//! wait for it. Several test binaries may provision at once: each builds in a directory of its
//! own (named by its process id) and renames it into place, so the first to finish wins and the
//! others use its environment.
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// One pinned environment.
pub struct PythonEnv {
    /// Whose it is, in messages: "the MCP tests".
    pub used_by: &'static str,
    /// The start of its directory's name, before the hash of its requirements.
    pub prefix: &'static str,
    /// The pinned requirements (their content names the environment: a change makes a new one).
    pub requirements: &'static str,
    /// Where the requirements are, in messages.
    pub requirements_path: &'static str,
    /// The variable that names an interpreter of the user's own instead, if any.
    pub variable: Option<&'static str>,
    /// What the environment must be able to run: `import …`.
    pub imports: &'static str,
}

/// One provisioning at a time in this process.
static PROVISIONING: Mutex<()> = Mutex::new(());

impl PythonEnv {
    /// The interpreter: the variable's as it is when set (it must import what is needed), else
    /// the provisioned environment's, made first if need be. The error says what is missing
    /// and how to get it.
    pub fn interpreter(&self) -> Result<PathBuf, String> {
        if let Some(python) = self.variable.and_then(std::env::var_os) {
            let python = PathBuf::from(python);
            return if self.imports(&python) {
                Ok(python)
            } else {
                Err(format!(
                    "{} is set to `{}`, which cannot `{}`: unset it to let the tests make their \
                     own environment, or install the packages of {} for it",
                    self.variable.unwrap_or_default(),
                    python.display(),
                    self.imports,
                    self.requirements_path
                ))
            };
        }
        let _one_at_a_time = PROVISIONING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let home = self.home()?;
        let python = home.join("bin").join("python");
        if !python.exists() {
            self.provision(&home)?;
        }
        Ok(python)
    }

    /// `target/peers/<prefix>-<hash of the requirements>`, found from the test binary's path
    /// (`target/<profile>/deps/<binary>`).
    fn home(&self) -> Result<PathBuf, String> {
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot find the test binary's path to place the peers: {e}"))?;
        let target = exe
            .ancestors()
            .nth(3)
            .ok_or_else(|| format!("the test binary `{}` is not under target/", exe.display()))?;
        Ok(target.join("peers").join(format!(
            "{}-{:016x}",
            self.prefix,
            fnv1a(self.requirements.as_bytes())
        )))
    }

    /// Makes the environment in a directory of this process's, then renames it to `home`.
    fn provision(&self, home: &Path) -> Result<(), String> {
        let parent = home.parent().ok_or("the peers' directory has no parent")?;
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
        let name = home
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(self.prefix);
        let building = parent.join(format!("{name}.building-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&building);
        eprintln!(
            "making {}' Python environment in {} (once; pinned by {})",
            self.used_by,
            home.display(),
            self.requirements_path
        );
        if let Err(e) = self.make(&building) {
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

    fn make(&self, dir: &Path) -> Result<(), String> {
        let venv = run(Command::new("python3").arg("-m").arg("venv").arg(dir)).map_err(|e| {
            format!(
                "{} need Python 3, and `python3` cannot be run ({e}): install Python 3 with its \
                 venv module{}",
                self.used_by,
                self.variable.map_or(String::new(), |variable| format!(
                    ", or set {variable} to an interpreter that has the packages of {}",
                    self.requirements_path
                ))
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
        std::fs::write(&requirements, self.requirements)
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
                "installing the packages of {} failed (the package registry must be reachable \
                 the first time; the environment is reused after):\n{}",
                self.requirements_path,
                String::from_utf8_lossy(&install.stderr).trim()
            ));
        }
        if !self.imports(&python) {
            return Err(format!(
                "the packages of {} were installed but `{}` fails",
                self.requirements_path, self.imports
            ));
        }
        Ok(())
    }

    /// Whether `python` can run the environment's imports.
    fn imports(&self, python: &Path) -> bool {
        Command::new(python)
            .args(["-c", self.imports])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

fn run(command: &mut Command) -> std::io::Result<std::process::Output> {
    command.stdin(Stdio::null()).output()
}

/// FNV-1a: a stable name for the requirements' content.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
