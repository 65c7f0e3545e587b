//! A PostgreSQL server of the `paused_store` example's own, for when no `DATABASE_URL` names
//! one: a fresh cluster (`initdb`) in a temporary directory, listening on 127.0.0.1 only, on a
//! free port, trusting local connections. It outlives the command that started it, so that
//! `pause`, `list` and `resume` (separate processes) share it; `stop` stops it and removes its
//! directory.
//!
//! The server's programs (`initdb`, `pg_ctl`, `postgres`) come from `$PG_BIN`, the `PATH` or
//! `/usr/lib/postgresql/VERSION/bin` (Debian and Ubuntu, the newest version); the example does
//! not install them. `initdb` refuses to run as root: run as root, the server runs as the
//! `postgres` system user (which the package creates; `nobody` when there is none), in a
//! directory it owns. The tests' own servers (`examples/tests/postgres_server/`) are made the
//! same way, each in a directory of its own ([`LocalServer::at`]).

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The programs a cluster needs, all in one directory.
const PROGRAMS: [&str; 3] = ["initdb", "pg_ctl", "postgres"];

/// Where Debian and Ubuntu put each PostgreSQL version's programs (`VERSION/bin`).
pub const DEBIAN_LIB: &str = "/usr/lib/postgresql";

/// The name of the server's directory in the temporary directory.
pub const DIR_NAME: &str = "tool-examples-paused-store-pg";

/// Why the example's own server could not be started or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocalServerError {
    /// The server's programs are not installed.
    #[error(
        "DATABASE_URL is not set, and this example would start a PostgreSQL server of its own, \
         but initdb, pg_ctl and postgres are neither on the PATH nor in \
         /usr/lib/postgresql/VERSION/bin: install PostgreSQL's server (on Debian and Ubuntu \
         `apt-get install postgresql`, on Fedora `dnf install postgresql-server`, on macOS \
         `brew install postgresql`) or set PG_BIN to the directory that holds them; or set \
         DATABASE_URL to a server of yours"
    )]
    Missing,
    /// `PG_BIN` names a directory without the programs.
    #[error("PG_BIN is {0}, which does not hold initdb, pg_ctl and postgres")]
    BadPgBin(String),
    /// Run as root, and no unprivileged user to run the server as.
    #[error(
        "run as root, the example runs PostgreSQL as the `postgres` (or `nobody`) user, and \
         there is neither"
    )]
    NoServerUser,
    /// A file or a program could not be used.
    #[error("cannot {action}")]
    Io {
        /// What the example was doing.
        action: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// A program of the server failed.
    #[error("{program} failed: {output}")]
    Failed {
        /// The program.
        program: &'static str,
        /// What it printed (and the server's log, for `pg_ctl start`).
        output: String,
    },
}

/// The example's own server: where it lives and how to reach it.
#[derive(Debug, Clone)]
pub struct LocalServer {
    /// The server's directory: the cluster (`data`), its log, its socket and its port.
    dir: PathBuf,
    /// The directory of the server's programs.
    bin: PathBuf,
    /// The system user the server runs as, when the example runs as root.
    user: Option<String>,
}

impl LocalServer {
    /// The example's server, started if it is not running (and made first if there is none),
    /// in [`LocalServer::directory`]. Returns it and whether it was made by this call.
    ///
    /// # Errors
    ///
    /// [`LocalServerError::Missing`] when PostgreSQL's programs are not installed, any other
    /// variant when the cluster cannot be made or the server does not start (with its log).
    pub fn start() -> Result<(Self, bool), LocalServerError> {
        let bin = binaries(std::env::var_os("PG_BIN"))?;
        let server = Self::at(Self::directory(), bin)?;
        let made = !server.data().join("PG_VERSION").is_file();
        if made {
            server.make()?;
        }
        if !server.running() {
            server.launch()?;
        }
        server.wait_for_connections()?;
        Ok((server, made))
    }

    /// A server whose cluster is (or will be) in `dir`, run with the programs in `bin`: as the
    /// `postgres` system user (else `nobody`) when this process is root, since `initdb`
    /// refuses to run as root. Nothing is made or started yet.
    ///
    /// # Errors
    ///
    /// [`LocalServerError::NoServerUser`] when run as root on a machine with neither user.
    pub fn at(dir: PathBuf, bin: PathBuf) -> Result<Self, LocalServerError> {
        let user = if is_root() {
            Some(server_user().ok_or(LocalServerError::NoServerUser)?)
        } else {
            None
        };
        Ok(Self { dir, bin, user })
    }

    /// Starts the server of a made cluster (`pg_ctl start`), and waits until it accepts
    /// connections.
    ///
    /// # Errors
    ///
    /// When `pg_ctl` fails or the server takes no connection within 10 s (with its log).
    pub fn launch(&self) -> Result<(), LocalServerError> {
        let started = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.dir.join("server.log"))
            .args(["-w", "-t", "30", "start"])
            .output()
            .map_err(io("run pg_ctl"))?;
        if !started.status.success() {
            return Err(LocalServerError::Failed {
                program: "pg_ctl start",
                output: format!("{}\n{}", text(&started), self.log()),
            });
        }
        self.wait_for_connections()
    }

    /// Stops the server if it runs (`pg_ctl stop`, fast, else immediate); the cluster stays.
    pub fn shut_down(&self) {
        if !self.data().join("postmaster.pid").exists() {
            return;
        }
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

    fn wait_for_connections(&self) -> Result<(), LocalServerError> {
        let port = self.port()?;
        if accepts_connections(port) {
            Ok(())
        } else {
            Err(LocalServerError::Failed {
                program: "the server",
                output: format!("no connection on port {port} within 10 s\n{}", self.log()),
            })
        }
    }

    /// Stops the example's server, if it runs, and removes its directory. Returns whether
    /// there was one.
    ///
    /// # Errors
    ///
    /// When the directory cannot be removed.
    pub fn stop() -> Result<bool, LocalServerError> {
        let dir = Self::directory();
        if !dir.exists() {
            return Ok(false);
        }
        // Stopping needs the programs only if a server runs.
        let found = binaries(std::env::var_os("PG_BIN")).and_then(|bin| Self::at(dir.clone(), bin));
        if let Ok(server) = found
            && server.running()
        {
            server.shut_down();
        }
        std::fs::remove_dir_all(&dir).map_err(io(format!("remove {}", dir.display())))?;
        Ok(true)
    }

    /// The server's directory: [`DIR_NAME`] in the temporary directory (`$TMPDIR`, else
    /// `/tmp`).
    pub fn directory() -> PathBuf {
        std::env::temp_dir().join(DIR_NAME)
    }

    /// The connection string of the server's database `postgres`, as its superuser
    /// `postgres` (trusted: no password).
    ///
    /// # Errors
    ///
    /// When the server's port cannot be read.
    pub fn url(&self) -> Result<String, LocalServerError> {
        Ok(format!(
            "postgresql://postgres@127.0.0.1:{}/postgres",
            self.port()?
        ))
    }

    /// The server's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Makes the cluster in the server's directory (anything there before is removed): `initdb`
    /// trusting local connections, listening on 127.0.0.1 only on a free port, with durability
    /// off (a throwaway cluster).
    ///
    /// # Errors
    ///
    /// When the directory cannot be made or given to the server's user, or `initdb` fails.
    pub fn make(&self) -> Result<(), LocalServerError> {
        // A directory left by a cluster that was never made whole is made again.
        let _ = std::fs::remove_dir_all(&self.dir);
        std::fs::create_dir_all(&self.dir).map_err(io(format!("create {}", self.dir.display())))?;
        if let Some(user) = &self.user {
            let (uid, gid) = ids(user)?;
            std::os::unix::fs::chown(&self.dir, Some(uid), Some(gid))
                .map_err(io(format!("give {} to {user}", self.dir.display())))?;
        }
        let initdb = self
            .command("initdb")
            .arg("-D")
            .arg(self.data())
            .args(["-A", "trust", "-U", "postgres", "-E", "UTF8"])
            .args(["--no-locale", "--no-sync"])
            .output()
            .map_err(io("run initdb"))?;
        if !initdb.status.success() {
            return Err(LocalServerError::Failed {
                program: "initdb",
                output: text(&initdb),
            });
        }
        let port = free_port().map_err(io("find a free port"))?;
        let mut conf = std::fs::OpenOptions::new()
            .append(true)
            .open(self.data().join("postgresql.conf"))
            .map_err(io("open the cluster's postgresql.conf"))?;
        write!(
            conf,
            "\nlisten_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{}'\n\
             fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n",
            self.dir.display()
        )
        .map_err(io("write the cluster's postgresql.conf"))?;
        // Written last: a directory with a port file holds a whole cluster.
        std::fs::write(self.dir.join("port"), port.to_string())
            .map_err(io("write the server's port"))?;
        Ok(())
    }

    fn port(&self) -> Result<u16, LocalServerError> {
        let path = self.dir.join("port");
        let text =
            std::fs::read_to_string(&path).map_err(io(format!("read {}", path.display())))?;
        text.trim().parse().map_err(|_| LocalServerError::Failed {
            program: "the example",
            output: format!(
                "{} holds no port: remove {}",
                path.display(),
                self.dir.display()
            ),
        })
    }

    /// Whether the server runs (`pg_ctl status`).
    fn running(&self) -> bool {
        self.data().join("postmaster.pid").exists()
            && self
                .command("pg_ctl")
                .arg("-D")
                .arg(self.data())
                .arg("status")
                .output()
                .is_ok_and(|out| out.status.success())
    }

    /// What the server has logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
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
        // The server started by `pg_ctl` must not hold the example's output open.
        command
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }
}

/// The directory of the server's programs: `pg_bin` when it is given; else the first
/// directory of the `PATH` that holds them all, or the newest `/usr/lib/postgresql/VERSION/bin`.
///
/// # Errors
///
/// [`LocalServerError::BadPgBin`] when `pg_bin` lacks one, [`LocalServerError::Missing`] when
/// no directory holds them.
pub fn binaries(pg_bin: Option<OsString>) -> Result<PathBuf, LocalServerError> {
    if let Some(dir) = pg_bin {
        let dir = PathBuf::from(dir);
        return if holds_programs(&dir) {
            Ok(dir)
        } else {
            Err(LocalServerError::BadPgBin(dir.display().to_string()))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    find(&path, Path::new(DEBIAN_LIB)).ok_or(LocalServerError::Missing)
}

/// The first directory of `path` that holds the server's programs, else the newest
/// `lib/VERSION/bin` that does.
pub fn find(path: &OsStr, lib: &Path) -> Option<PathBuf> {
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

/// Whether `dir` holds the server's programs (`initdb`, `pg_ctl`, `postgres`).
pub fn holds_programs(dir: &Path) -> bool {
    PROGRAMS.iter().all(|program| dir.join(program).is_file())
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// The unprivileged user a server started by root runs as: `postgres`, else `nobody`.
fn server_user() -> Option<String> {
    ["postgres", "nobody"]
        .into_iter()
        .find(|user| {
            Command::new("id")
                .args(["-u", user])
                .output()
                .is_ok_and(|out| out.status.success())
        })
        .map(str::to_owned)
}

/// The user id and group id of `user`.
fn ids(user: &str) -> Result<(u32, u32), LocalServerError> {
    let id = |flag: &str| -> Result<u32, LocalServerError> {
        let out = Command::new("id")
            .args([flag, user])
            .output()
            .map_err(io("run id"))?;
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .map_err(|_| LocalServerError::Failed {
                program: "id",
                output: format!("`id {flag} {user}` gives no number"),
            })
    };
    Ok((id("-u")?, id("-g")?))
}

/// `runuser` (util-linux), when there is one.
fn runuser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|dir| dir.join("runuser"))
        .find(|candidate| candidate.is_file())
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Whether the server accepts TCP connections on `port` within ten seconds.
fn accepts_connections(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn io(action: impl Into<String>) -> impl FnOnce(std::io::Error) -> LocalServerError {
    let action = action.into();
    move |source| LocalServerError::Io { action, source }
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
    .trim()
    .to_owned()
}
