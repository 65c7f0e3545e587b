//! A worker process that serves Restate handlers: an example of this crate
//! (`tool-durable/examples/<name>.rs`), run on a free loopback port given to it as `PORT`,
//! killed with SIGKILL ([`Worker::kill_hard`]) and started again on the same port
//! ([`Worker::restart`]), as a crashed and redeployed worker would be.
//!
//! Cargo gives integration tests the paths of a package's binaries (`CARGO_BIN_EXE_<name>`) but
//! not of its examples, and builds examples only for a `cargo test` without target filters
//! (`cargo test --test restate_peer` builds none). So the first use of an example in a test
//! binary builds it itself, with the cargo that runs the tests (`$CARGO`), into the test
//! binary's own target directory and profile, and so always runs the current source; the
//! binary is then `target/<profile>/examples/<name>`, where cargo puts examples.
//!
//! The build is `cargo build --workspace --all-features --example <name>`: the features of
//! the example's dependencies are then unified as for the README's and CI's
//! `cargo test --workspace --all-features`, which has already built the example, so there
//! nothing is compiled again. (With `-p tool-durable`, tokio, serde, tool-runtime and the rest
//! would get other features, and CI would build most of the example's dependencies a second
//! time.) A targeted `cargo test -p tool-durable --test …` pays for that build once instead;
//! later runs find it up to date.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use tokio::net::TcpStream;

use super::{TempDir, free_ports, loopback, profile_dir, tail, target_dir};

/// How long a started worker may take to accept connections.
const READY_WITHIN: Duration = Duration::from_secs(30);

/// A running worker, killed when dropped.
#[derive(Debug)]
pub struct Worker {
    binary: PathBuf,
    args: Vec<String>,
    port: u16,
    env: Vec<(String, String)>,
    child: Option<Child>,
    /// Holds `worker.log`: the output of every start, one after the other.
    dir: TempDir,
}

impl Worker {
    /// Builds the example `example` of the workspace when needed, starts it with `args` on a
    /// free port with `env` (and `PORT`), and waits until it accepts connections.
    pub async fn start(example: &str, args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<Self> {
        let name = example.to_owned();
        let binary = tokio::task::spawn_blocking(move || example_binary(&name))
            .await
            .context("the build task panicked")??;
        let mut worker = Worker {
            binary,
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            port: 0,
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            child: None,
            dir: TempDir::new(&format!("worker-{example}"))?,
        };
        // The port is chosen free, then given to the worker: another process may take it in
        // between, so a worker that could not bind is started again on another.
        let mut attempts = 0;
        loop {
            attempts += 1;
            worker.port = free_ports(1)?[0];
            match worker.launch().await {
                Ok(()) => return Ok(worker),
                Err(_) if attempts < 5 && port_taken(&worker.log()) => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Runs the worker's own program once more with `args` and `env` (an operator's command
    /// of the example, such as `status RUN`), and returns what it printed, both streams.
    pub fn run_command(&self, args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<String> {
        let out = Command::new(&self.binary)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("run {} {args:?}", self.binary.display()))?;
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !out.status.success() {
            bail!("{args:?} failed ({}): {printed}", out.status);
        }
        Ok(printed)
    }

    /// The URL to register with Restate, e.g. `http://127.0.0.1:41236`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The worker's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The worker's output (stdout and stderr) so far, of every start.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("worker.log")
    }

    /// The worker's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether the worker's process runs.
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    /// Kills the worker with SIGKILL (`Child::kill` on Unix), as a crash would, and waits for
    /// it to be gone. Its open connections are reset.
    pub fn kill_hard(&mut self) -> anyhow::Result<()> {
        if let Some(mut child) = self.child.take() {
            // It may have exited by itself: killing it then fails, waiting still reaps it.
            let _ = child.kill();
            child.wait().context("waiting for the killed worker")?;
        }
        Ok(())
    }

    /// Starts the worker again (killing it first if it runs) on the same port with the same
    /// environment, and waits until it accepts connections.
    pub async fn restart(&mut self) -> anyhow::Result<()> {
        self.kill_hard()?;
        self.launch().await
    }

    /// Spawns the worker and waits until its port accepts connections.
    async fn launch(&mut self) -> anyhow::Result<()> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())?;
        let child = Command::new(&self.binary)
            .args(&self.args)
            .env("PORT", self.port.to_string())
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot run `{}`", self.binary.display()))?;
        self.child = Some(child);
        let addr = loopback(self.port);
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok())
                .flatten()
            {
                self.child = None;
                bail!(
                    "the worker `{}` exited on start ({status}); its output:\n{}",
                    self.binary.display(),
                    tail(&self.log(), 40)
                );
            }
            if TcpStream::connect(addr).await.is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                self.kill_hard()?;
                bail!(
                    "the worker `{}` did not accept connections on {addr} within \
                     {READY_WITHIN:?}; its output:\n{}",
                    self.binary.display(),
                    tail(&self.log(), 40)
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Whether a worker's log says its port was taken by another process in the meantime.
fn port_taken(log: &str) -> bool {
    log.contains("listener can bind")
        || log.to_lowercase().contains("in use")
        || log.contains("os error 98")
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.kill_hard();
    }
}

/// The binary of the workspace's example `name`, built (once per test binary) with the cargo
/// that runs the tests, into the test binary's target directory and profile.
pub fn example_binary(name: &str) -> anyhow::Result<PathBuf> {
    static BUILT: Mutex<Option<HashMap<String, Result<PathBuf, String>>>> = Mutex::new(None);
    let mut built = BUILT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let built = built.get_or_insert_with(HashMap::new);
    let result = built
        .entry(name.to_owned())
        .or_insert_with(|| build_example(name).map_err(|e| format!("{e:#}")));
    result.clone().map_err(|e| anyhow!(e))
}

fn build_example(name: &str) -> anyhow::Result<PathBuf> {
    let profile_dir = profile_dir()?;
    let target = target_dir()?;
    // Cargo's directory of the `dev` and `test` profiles is `debug`; any other profile's is
    // its name.
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev".to_owned(),
        Some(other) => other.to_owned(),
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let started = Instant::now();
    let output = Command::new(&cargo)
        .args(["build", "--quiet", "--workspace", "--all-features"])
        .args(["--example", name])
        .args(["--profile", &profile])
        .arg("--target-dir")
        .arg(&target)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run `{}`", Path::new(&cargo).display()))?;
    if !output.status.success() {
        bail!(
            "`cargo build --workspace --all-features --example {name}` failed:\n{}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let binary = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !binary.is_file() {
        bail!(
            "`cargo build --example {name}` succeeded but `{}` is not there",
            binary.display()
        );
    }
    eprintln!(
        "example {name} built (or found up to date) in {:.1?}",
        started.elapsed()
    );
    Ok(binary)
}
