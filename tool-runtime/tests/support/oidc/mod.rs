//! A real authorization server for the authorization tests (Z5): npm `oidc-provider`, pinned,
//! installed by the tests under the build's `target/peers/` on first use (nothing to run
//! before `cargo test`), started on a free loopback port with `provider.mjs`.
#![allow(unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

#[path = "../npm.rs"]
mod npm;

/// The pinned version of `oidc-provider`.
pub const VERSION: &str = "9.13.3";

/// A running `oidc-provider`; killed when dropped.
pub struct OidcProvider {
    /// Its issuer identifier, `http://127.0.0.1:PORT`.
    pub issuer: String,
    _child: Child,
    /// Its stdout, kept open while it runs.
    _stdout: BufReader<tokio::process::ChildStdout>,
}

impl OidcProvider {
    /// Starts one issuing JWT access tokens for `resource`.
    #[allow(dead_code)]
    pub async fn start(resource: &str) -> Result<Self, String> {
        let home = provisioned(&format!("oidc-provider-{VERSION}"))?;
        Self::run(&home, "provider.mjs", &[("RESOURCE", resource)]).await
    }

    /// Starts one for the authorization-code flow (`provider_code.mjs`, in its own peer
    /// directory): JWT access tokens for `resource` living `ttl` seconds, the public client
    /// `app` redirecting to `redirect_uri`, dynamic registration, and a user's step that
    /// completes by itself (login as `alice`, consent to what is asked).
    #[allow(dead_code)]
    pub async fn start_code(resource: &str, redirect_uri: &str, ttl: u32) -> Result<Self, String> {
        let home = provisioned(&format!("oidc-provider-{VERSION}-code"))?;
        let ttl = ttl.to_string();
        let env = [
            ("RESOURCE", resource),
            ("REDIRECT_URI", redirect_uri),
            ("ACCESS_TTL", ttl.as_str()),
        ];
        Self::run(&home, "provider_code.mjs", &env).await
    }

    /// Runs the script `name` (copied into `home`, where its packages are) with `env`.
    async fn run(home: &Path, name: &str, env: &[(&str, &str)]) -> Result<Self, String> {
        let script = (SCRIPTS.iter().find(|(script, _)| *script == name))
            .ok_or_else(|| format!("no script {name}"))?;
        let local = home.join(name);
        place(script.1.as_bytes(), &local)?;
        let mut child = Command::new("node")
            .arg(&local)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("`node` cannot be run ({e}): install Node.js 20 or later"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut line = String::new();
        let mut stdout = BufReader::new(stdout);
        let read = stdout.read_line(&mut line);
        tokio::time::timeout(std::time::Duration::from_secs(30), read)
            .await
            .map_err(|_| "oidc-provider did not start within 30 s".to_owned())?
            .map_err(|e| format!("reading oidc-provider's stdout: {e}"))?;
        Ok(Self {
            issuer: line.trim().to_owned(),
            _child: child,
            _stdout: stdout,
        })
    }
}

/// The scripts by name, compiled in: a test of another package (the examples') that
/// includes this module by path runs them too.
const SCRIPTS: [(&str, &str); 2] = [
    ("provider.mjs", include_str!("provider.mjs")),
    ("provider_code.mjs", include_str!("provider_code.mjs")),
];

/// Puts the script `text` at `local` (beside the installed packages, where its imports
/// resolve) unless it is there already: written aside and renamed into place, so that a
/// provider another test is starting never reads half a file.
fn place(text: &[u8], local: &Path) -> Result<(), String> {
    if std::fs::read(local).is_ok_and(|placed| placed == text) {
        return Ok(());
    }
    static WRITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let aside = local.with_extension(format!("writing-{}-{n}", std::process::id()));
    std::fs::write(&aside, text).map_err(|e| format!("cannot write the script: {e}"))?;
    std::fs::rename(&aside, local).map_err(|e| format!("cannot place the script: {e}"))
}

/// `target/peers/NAME` holding `oidc-provider` VERSION, installed with npm on first use: one
/// installation at a time in this process (the tests of a binary start at once), each built in
/// a directory of its own and renamed into place (another test binary may be installing too).
fn provisioned(name: &str) -> Result<PathBuf, String> {
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = INSTALLING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let exe = std::env::current_exe().map_err(|e| format!("no test binary path: {e}"))?;
    let target = (exe.ancestors().nth(3))
        .ok_or_else(|| format!("the test binary `{}` is not under target/", exe.display()))?;
    let home = target.join("peers").join(name);
    if home
        .join("node_modules/oidc-provider/package.json")
        .exists()
    {
        return Ok(home);
    }
    let building = home.with_file_name(format!("{name}.building-{}", std::process::id()));
    eprintln!(
        "installing oidc-provider {VERSION} in {} (once)",
        home.display()
    );
    let installed = npm::install_with_retries(
        &format!("`npm install oidc-provider@{VERSION}`"),
        || {
            let _ = std::fs::remove_dir_all(&building);
            std::fs::create_dir_all(&building)
                .map_err(|e| format!("cannot create a directory: {e}"))
        },
        || {
            let mut npm = std::process::Command::new("npm");
            npm.args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(&building)
            .arg(format!("oidc-provider@{VERSION}"));
            npm
        },
    );
    if let Err(e) = installed {
        let _ = std::fs::remove_dir_all(&building);
        return Err(e);
    }
    match std::fs::rename(&building, &home) {
        Ok(()) => Ok(home),
        // Another test binary finished first: use its copy.
        Err(_)
            if home
                .join("node_modules/oidc-provider/package.json")
                .exists() =>
        {
            let _ = std::fs::remove_dir_all(&building);
            Ok(home)
        }
        Err(e) => Err(format!("cannot move oidc-provider into place: {e}")),
    }
}
