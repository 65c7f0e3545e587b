//! A PostgreSQL server of a test's own: a fresh cluster in a temporary directory, made and
//! started as the `paused_store` example makes its own ([`LocalServer`]: listening on
//! 127.0.0.1 only, on a free port, trusting local connections, run as the `postgres` user when
//! the test runs as root); stopped and its directory removed when the [`Postgres`] guard is
//! dropped, also when the test fails.
//!
//! The server's programs come from `$PG_BIN`, the `PATH` or `/usr/lib/postgresql/VERSION/bin`.
//! When they are missing and the test runs as root on a machine with `apt-get`, it installs
//! them (`apt-get install postgresql`); else it fails saying what to install.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use tool_examples::local_postgres::{DEBIAN_LIB, LocalServer, find, holds_programs, is_root};

/// What a machine without PostgreSQL is told.
pub(crate) const MISSING: &str = "the PostgreSQL tests (examples/tests/paused_store_pg.rs) start \
     a server of their own, and its programs (initdb, pg_ctl, postgres) are neither on the PATH \
     nor in /usr/lib/postgresql/VERSION/bin: install PostgreSQL's server (on Debian and Ubuntu \
     `apt-get install postgresql`, on Fedora `dnf install postgresql-server`, on macOS \
     `brew install postgresql`), or set PG_BIN to the directory that holds them; run as root on \
     a machine with apt-get, the test installs it itself";

/// A running PostgreSQL server, stopped and removed when dropped.
pub(crate) struct Postgres {
    server: LocalServer,
}

impl Postgres {
    /// Starts a server for test `name`, and waits until it accepts connections.
    ///
    /// # Panics
    ///
    /// When PostgreSQL is missing and cannot be installed here (the message says what to
    /// install), or the server does not start (the message holds its log).
    pub(crate) fn start(name: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        // The server's user must reach the directory: /tmp is open to all.
        let base = if is_root() {
            PathBuf::from("/tmp")
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!(
            "pg-{name}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let server = LocalServer::at(dir, binaries()).unwrap_or_else(|e| panic!("{e}"));
        // From here on, a failure stops the server and removes the directory.
        let guard = Postgres { server };
        // The port is chosen free, then given to the server: another process may take it in
        // between, so a cluster whose server could not start is made again on another.
        let mut last = None;
        for _ in 0..3 {
            match guard.server.make().and_then(|()| guard.server.launch()) {
                Ok(()) => return guard,
                Err(e) => last = Some(e),
            }
        }
        panic!(
            "the PostgreSQL server did not start: {}",
            last.map(|e| e.to_string()).unwrap_or_default()
        );
    }

    /// The connection string of the server's database `postgres`, as its superuser
    /// `postgres` (trusted: no password).
    pub(crate) fn url(&self) -> String {
        self.server.url().unwrap_or_else(|e| panic!("{e}"))
    }

    /// The server's log.
    pub(crate) fn log(&self) -> String {
        self.server.log()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.server.shut_down();
        let _ = std::fs::remove_dir_all(self.server.dir());
    }
}

/// The directory of the server's programs, found or installed once for the whole test binary.
pub(crate) fn binaries() -> PathBuf {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let can_install = is_root() && Path::new("/usr/bin/apt-get").exists();
        provision(
            std::env::var_os("PG_BIN"),
            &path,
            Path::new(DEBIAN_LIB),
            can_install,
        )
    });
    match found {
        Ok(dir) => dir.clone(),
        Err(message) => panic!("{message}"),
    }
}

/// The directory of the server's programs: `pg_bin` when it is given; else the first
/// directory of `path` that holds them all, or the newest version's under `lib`
/// (`lib/VERSION/bin`); else, when `can_install` (root, with apt-get), after installing
/// PostgreSQL. Fails with [`MISSING`] (or why the installation failed) otherwise.
pub(crate) fn provision(
    pg_bin: Option<OsString>,
    path: &OsStr,
    lib: &Path,
    can_install: bool,
) -> Result<PathBuf, String> {
    if let Some(dir) = pg_bin {
        let dir = PathBuf::from(dir);
        return if holds_programs(&dir) {
            Ok(dir)
        } else {
            Err(format!(
                "PG_BIN is {}, which does not hold initdb, pg_ctl and postgres",
                dir.display()
            ))
        };
    }
    if let Some(dir) = find(path, lib) {
        return Ok(dir);
    }
    if !can_install {
        return Err(MISSING.to_owned());
    }
    eprintln!("installing PostgreSQL with apt-get for the PostgreSQL tests (once)");
    let install = || {
        Command::new("apt-get")
            .args([
                "install",
                "-y",
                "-qq",
                "--no-install-recommends",
                "postgresql",
            ])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .output()
    };
    let mut output = install().map_err(|e| format!("{MISSING}\n(apt-get: {e})"))?;
    if !output.status.success() {
        // A fresh machine may have no package lists yet.
        let _ = Command::new("apt-get")
            .args(["update", "-qq"])
            .stdin(Stdio::null())
            .output();
        output = install().map_err(|e| format!("{MISSING}\n(apt-get: {e})"))?;
    }
    match find(path, lib) {
        Some(dir) if output.status.success() => Ok(dir),
        _ => Err(format!(
            "{MISSING}\n(`apt-get install postgresql` failed: {})",
            String::from_utf8_lossy(&output.stderr).trim()
        )),
    }
}
