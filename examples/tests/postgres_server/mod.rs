//! A PostgreSQL server of a test's own: a fresh cluster (`initdb`) in a temporary directory,
//! listening on 127.0.0.1 only, on a free port, trusting local connections; stopped
//! (`pg_ctl stop -m fast`) and its directory removed when the [`Postgres`] guard is dropped,
//! also when the test fails.
//!
//! The server's programs (`initdb`, `pg_ctl`, `postgres`) come from `$PG_BIN`, the `PATH` or
//! `/usr/lib/postgresql/VERSION/bin` (Debian and Ubuntu, the newest version). When they are
//! missing and the test runs as root on a machine with `apt-get`, it installs them
//! (`apt-get install postgresql`); else it fails saying what to install. `initdb` refuses to
//! run as root: a test run as root runs the server as the `postgres` system user (which the
//! package creates; `nobody` when there is none), in a directory it owns.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The programs a cluster needs, all in one directory.
const PROGRAMS: [&str; 3] = ["initdb", "pg_ctl", "postgres"];

/// Where Debian and Ubuntu put each PostgreSQL version's programs (`VERSION/bin`).
const DEBIAN_LIB: &str = "/usr/lib/postgresql";

/// What a machine without PostgreSQL is told.
pub(crate) const MISSING: &str = "the PostgreSQL tests (examples/tests/paused_store_pg.rs) start \
     a server of their own, and its programs (initdb, pg_ctl, postgres) are neither on the PATH \
     nor in /usr/lib/postgresql/VERSION/bin: install PostgreSQL's server (on Debian and Ubuntu \
     `apt-get install postgresql`, on Fedora `dnf install postgresql-server`, on macOS \
     `brew install postgresql`), or set PG_BIN to the directory that holds them; run as root on \
     a machine with apt-get, the test installs it itself";

/// A running PostgreSQL server, stopped and removed when dropped.
pub(crate) struct Postgres {
    /// The temporary directory: the cluster (`data`), the server's log and its socket.
    dir: PathBuf,
    /// The directory of the server's programs.
    bin: PathBuf,
    /// The system user the server runs as, when the test runs as root.
    user: Option<String>,
    port: u16,
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
        let bin = binaries();
        let user = is_root().then(server_user);
        // The server's user must reach the directory: /tmp is open to all.
        let base = if user.is_some() {
            PathBuf::from("/tmp")
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!(
            "pg-{name}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        // From here on, a failure stops the server and removes the directory.
        let mut server = Postgres {
            dir,
            bin,
            user,
            port: 0,
        };
        if let Some(user) = &server.user {
            let (uid, gid) = ids(user);
            std::os::unix::fs::chown(&server.dir, Some(uid), Some(gid))
                .expect("the temporary directory is given to the server's user");
        }
        let initdb = server
            .command("initdb")
            .arg("-D")
            .arg(server.data())
            .args(["-A", "trust", "-U", "postgres", "-E", "UTF8"])
            .args(["--no-locale", "--no-sync"])
            .output()
            .expect("initdb starts");
        assert!(initdb.status.success(), "initdb failed:\n{}", text(&initdb));
        // The port is chosen free, then given to the server: another process may take it in
        // between, so a server that could not start is started again on another.
        for _ in 0..3 {
            server.port = free_port();
            let mut conf = std::fs::OpenOptions::new()
                .append(true)
                .open(server.data().join("postgresql.conf"))
                .expect("the cluster's configuration");
            // Later lines win: each attempt's port replaces the last. Durability is not
            // needed of a cluster removed after the test.
            write!(
                conf,
                "\nlisten_addresses = '127.0.0.1'\nport = {}\nunix_socket_directories = '{}'\n\
                 fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n",
                server.port,
                server.dir.display()
            )
            .expect("the cluster's configuration is written");
            let started = server
                .command("pg_ctl")
                .arg("-D")
                .arg(server.data())
                .arg("-l")
                .arg(server.dir.join("server.log"))
                .args(["-w", "-t", "30", "start"])
                .stdin(Stdio::null())
                .output()
                .expect("pg_ctl starts");
            if started.status.success() && server.accepts_connections() {
                return server;
            }
        }
        panic!("the PostgreSQL server did not start:\n{}", server.log());
    }

    /// The connection string of the server's database `postgres`, as its superuser
    /// `postgres` (trusted: no password).
    pub(crate) fn url(&self) -> String {
        format!("postgresql://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The server's log.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Whether the server accepts TCP connections within ten seconds.
    fn accepts_connections(&self) -> bool {
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// `program` of the server's, run as the server's user, in its directory.
    fn command(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        let mut command = match &self.user {
            None => Command::new(program),
            Some(user) => match runuser() {
                Some(runuser) => {
                    let mut command = Command::new(runuser);
                    command.args(["-u", user, "--"]).arg(program);
                    command
                }
                None => {
                    // util-linux `su` gives the arguments after the user to the shell.
                    let mut command = Command::new("su");
                    command
                        .args(["-s", "/bin/sh", user, "-c", r#"exec "$0" "$@""#])
                        .arg(program);
                    command
                }
            },
        };
        command.current_dir(&self.dir).stdin(Stdio::null());
        command
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.data().join("postmaster.pid").exists() {
            let stop = |mode: &str| {
                self.command("pg_ctl")
                    .arg("-D")
                    .arg(self.data())
                    .args(["-m", mode, "-w", "-t", "30", "stop"])
                    .output()
                    .is_ok_and(|out| out.status.success())
            };
            if !stop("fast") {
                stop("immediate");
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
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

/// The first directory of `path` that holds the programs, else the newest `lib/VERSION/bin`
/// that does.
fn find(path: &OsStr, lib: &Path) -> Option<PathBuf> {
    if let Some(dir) = std::env::split_paths(path).find(|dir| holds_programs(dir)) {
        return Some(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(lib)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let major = name.to_str()?.split('.').next()?.parse().ok()?;
            Some((major, entry.path().join("bin")))
        })
        .filter(|(_, dir)| holds_programs(dir))
        .collect();
    versions.sort();
    versions.pop().map(|(_, dir)| dir)
}

fn holds_programs(dir: &Path) -> bool {
    PROGRAMS.iter().all(|program| dir.join(program).is_file())
}

/// Whether this process runs as root.
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// The unprivileged user a server started by root runs as: `postgres` (the package's), else
/// `nobody`.
fn server_user() -> String {
    let exists = |user: &str| {
        Command::new("id")
            .arg("-u")
            .arg(user)
            .output()
            .is_ok_and(|out| out.status.success())
    };
    let user = ["postgres", "nobody"]
        .into_iter()
        .find(|user| exists(user))
        .expect(
            "the test runs as root, and initdb refuses to: it needs a `postgres` (or `nobody`) \
             user to run the server as",
        );
    user.to_owned()
}

/// The user id and group id of `user`.
fn ids(user: &str) -> (u32, u32) {
    let id = |flag: &str| -> u32 {
        let out = Command::new("id")
            .arg(flag)
            .arg(user)
            .output()
            .expect("`id` runs");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("`id {flag} {user}` gives no number"))
    };
    (id("-u"), id("-g"))
}

/// `runuser` (util-linux), when there is one.
fn runuser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|dir| dir.join("runuser"))
        .find(|candidate| candidate.is_file())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
