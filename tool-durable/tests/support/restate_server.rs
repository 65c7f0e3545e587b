//! A Restate server of a test's own.
//!
//! The server is the npm package `@restatedev/restate-server`, pinned at [`VERSION`]: it
//! depends on a platform package (`@restatedev/restate-server-linux-x64` and the like) that
//! holds one static binary, `bin/restate-server`, which runs without network. The tests
//! install it themselves with the machine's `npm` into `target/peers/restate-server-<VERSION>/`
//! on first use and reuse it after; nothing needs to be run before `cargo test`. Several test
//! binaries may provision at once: each installs into a directory of its own and renames it
//! into place, so the first to finish wins and the others use its copy.
//!
//! [`RestateServer::start`] runs it on free loopback ports (ingress, admin and the
//! node-to-node "message fabric"; TCP only, no Unix sockets), with its data and log in a fresh
//! temporary directory, a small memory budget, and retry and suspension settings fit for tests
//! (see [`TEST_SETTINGS`]); it is killed and its directory removed when the guard is dropped.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use serde_json::{Value, json};

use super::{HttpResponse, TempDir, free_ports, http, loopback, tail};

#[path = "../../../tool-runtime/tests/support/npm.rs"]
mod npm;

/// The pinned version of the server (the npm package and its platform package).
pub const VERSION: &str = "1.7.12";

/// What a machine without npm is told.
pub const MISSING_NPM: &str = "the Restate tests of tool-durable start a Restate server of \
     their own, installed on first use with npm (the package @restatedev/restate-server) into \
     target/peers/, and `npm` cannot be run here: install Node.js and npm (on Debian and Ubuntu \
     `apt-get install nodejs npm`, on macOS `brew install node`), then run the tests again";

/// How long a started server may take to answer on its ingress and admin ports.
const READY_WITHIN: Duration = Duration::from_secs(60);

/// How long one request to the server may take (attaching waits longer, see
/// [`RestateServer::attach_workflow`]).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The server's settings for tests, as environment variables (each is a key of its
/// configuration file: `RESTATE_` and the path, `__` between levels, `_` for `-`). Settings
/// given to [`RestateServer::start_with`] come after these, and so win.
pub const TEST_SETTINGS: &[(&str, &str)] = &[
    // No telemetry (it would be sent to the vendor once a day).
    ("RESTATE_DISABLE_TELEMETRY", "true"),
    ("RESTATE_DISABLE_PROMETHEUS", "true"),
    // A killed worker's invocation is retried within ~0.5 s (defaults: 500 ms growing to 1 min,
    // 70 attempts, then the invocation is paused).
    ("RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL", "50ms"),
    ("RESTATE_DEFAULT_RETRY_POLICY__EXPONENTIATION_FACTOR", "2.0"),
    ("RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL", "500ms"),
    ("RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS", "1000"),
    // An invocation that waits (on an awakeable, a timer, a call) is asked to suspend after
    // 1 s without progress, not 1 min; one that does not suspend or answer then is aborted and
    // retried after 10 s more, not 10 min.
    ("RESTATE_WORKER__INVOKER__INACTIVITY_TIMEOUT", "1s"),
    ("RESTATE_WORKER__INVOKER__ABORT_TIMEOUT", "10s"),
    // A small footprint: two partitions (not 24), RocksDB's memory 256 MiB (not 2 GiB), small
    // caches.
    ("RESTATE_DEFAULT_NUM_PARTITIONS", "2"),
    ("RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE", "256MiB"),
    ("RESTATE_BIFROST__RECORD_CACHE_MEMORY_SIZE", "16MiB"),
    ("RESTATE_ADMIN__QUERY_ENGINE__MEMORY_SIZE", "128MiB"),
];

/// A running Restate server, killed and its data removed when dropped.
#[derive(Debug)]
pub struct RestateServer {
    child: Option<Child>,
    /// The data (`data/`) and the log (`server.log`).
    dir: TempDir,
    ingress: SocketAddr,
    admin: SocketAddr,
    fabric: SocketAddr,
}

impl RestateServer {
    /// Starts a server with [`TEST_SETTINGS`] (installing it first when needed), and waits
    /// until its admin API and ingress answer.
    pub async fn start() -> anyhow::Result<Self> {
        Self::start_with(&[]).await
    }

    /// Starts a server as [`RestateServer::start`] does, with `settings` (environment
    /// variables such as `RESTATE_WORKER__INVOKER__INACTIVITY_TIMEOUT`) over
    /// [`TEST_SETTINGS`].
    pub async fn start_with(settings: &[(&str, &str)]) -> anyhow::Result<Self> {
        let binary = tokio::task::spawn_blocking(binary)
            .await
            .context("the provisioning task panicked")?
            .map_err(|message| anyhow!(message))?;
        let settings: Vec<(String, String)> = TEST_SETTINGS
            .iter()
            .chain(settings)
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let started = Instant::now();
        let unbound = loopback(0);
        let mut server = RestateServer {
            child: None,
            dir: TempDir::new("restate-server")?,
            ingress: unbound,
            admin: unbound,
            fabric: unbound,
        };
        // The ports are chosen free, then given to the server: another process may take one
        // in between, so a server that could not bind is started again on others.
        let mut attempts = 0;
        loop {
            attempts += 1;
            let ports = free_ports(3)?;
            server.ingress = loopback(ports[0]);
            server.admin = loopback(ports[1]);
            server.fabric = loopback(ports[2]);
            let Err(e) = server.launch(&binary, &settings).await else {
                eprintln!(
                    "restate-server {VERSION} ready in {:.1?} (ingress {}, admin {})",
                    started.elapsed(),
                    server.ingress_url(),
                    server.admin_url()
                );
                return Ok(server);
            };
            server.kill();
            let log = server.log();
            // Linux says "Address in use (os error 98)" or "Address already in use".
            let taken = log.to_lowercase().contains("in use") || log.contains("os error 98");
            if attempts < 5 && taken {
                continue;
            }
            return Err(e.context(format!(
                "restate-server did not start; the end of its log:\n{}",
                tail(&log, 40)
            )));
        }
    }

    /// Spawns the server into `self.dir` and waits until it is ready.
    async fn launch(&mut self, binary: &Path, settings: &[(String, String)]) -> anyhow::Result<()> {
        let data = self.dir.path().join("data");
        let _ = std::fs::remove_dir_all(&data);
        let log = std::fs::File::create(self.log_path())?;
        let mut command = Command::new(binary);
        // Only this server's settings: none of the caller's `RESTATE_*` (or `RUST_LOG`, which
        // would override the log filter).
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("RESTATE_") || name == "RUST_LOG" {
                command.env_remove(name);
            }
        }
        command
            .arg("--base-dir")
            .arg(&data)
            .args([
                "--node-name",
                "test-node",
                "--listen-mode",
                "tcp",
                "--no-logo",
            ])
            .args(["--log-disable-ansi-codes", "true"])
            .env("RESTATE_INGRESS__BIND_ADDRESS", self.ingress.to_string())
            .env("RESTATE_ADMIN__BIND_ADDRESS", self.admin.to_string())
            .env("RESTATE_BIND_ADDRESS", self.fabric.to_string())
            .envs(settings.iter().map(|(k, v)| (k, v)))
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        self.child = Some(
            command
                .spawn()
                .with_context(|| format!("cannot run `{}`", binary.display()))?,
        );
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok())
                .flatten()
            {
                bail!("restate-server exited during start-up ({status})");
            }
            if self.answers().await {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("restate-server was not ready within {READY_WITHIN:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Whether the admin API and the ingress are up: `GET /health` on the admin port, `GET
    /// /restate/health` on the ingress, and a query (the cluster is provisioned).
    async fn answers(&self) -> bool {
        let short = Duration::from_secs(2);
        let ok = |response: anyhow::Result<HttpResponse>| response.is_ok_and(|r| r.is_success());
        ok(http(self.admin, "GET", "/health", None, short).await)
            && ok(http(self.ingress, "GET", "/restate/health", None, short).await)
            && ok(http(
                self.admin,
                "POST",
                "/query",
                Some(&json!({"query": "SELECT id FROM sys_invocation LIMIT 1"})),
                short,
            )
            .await)
    }

    /// The ingress, e.g. `http://127.0.0.1:41234` (no trailing slash).
    pub fn ingress_url(&self) -> String {
        format!("http://{}", self.ingress)
    }

    /// The admin API, e.g. `http://127.0.0.1:41235` (no trailing slash).
    pub fn admin_url(&self) -> String {
        format!("http://{}", self.admin)
    }

    /// The ingress's address.
    pub fn ingress_addr(&self) -> SocketAddr {
        self.ingress
    }

    /// The admin API's address.
    pub fn admin_addr(&self) -> SocketAddr {
        self.admin
    }

    /// The server's temporary directory (its data in `data/`, its log in `server.log`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// Registers the deployment at `worker_url` (`POST /deployments` with `force`, so a
    /// changed worker replaces the last one): the server discovers its services over HTTP/2
    /// cleartext, which restate-sdk's `HttpServer` serves. Returns the server's answer (the
    /// deployment's `id` and its `services`).
    pub async fn register(&self, worker_url: &str) -> anyhow::Result<Value> {
        let body = json!({"uri": worker_url, "force": true});
        let response = self
            .admin_request("POST", "/deployments", Some(&body))
            .await?;
        if !response.is_success() {
            bail!(
                "registering the deployment {worker_url} failed: {} {}",
                response.status,
                response.body
            );
        }
        Ok(response.json())
    }

    /// The rows of the SQL `sql` over the server's introspection tables (`sys_invocation`,
    /// `sys_journal`, `state`, …): `POST /query` on the admin API answers
    /// `{"rows": [{"column": value, …}, …]}`, and a column whose value is NULL is left out of
    /// its row.
    pub async fn query(&self, sql: &str) -> anyhow::Result<Vec<Value>> {
        let response = self
            .admin_request("POST", "/query", Some(&json!({ "query": sql })))
            .await?;
        if !response.is_success() {
            bail!(
                "the query {sql:?} failed: {} {}",
                response.status,
                response.body
            );
        }
        match response.json() {
            Value::Object(mut answer) => match answer.remove("rows") {
                Some(Value::Array(rows)) => Ok(rows),
                _ => bail!("the query's answer has no rows: {}", response.body),
            },
            _ => bail!("the query's answer is not an object: {}", response.body),
        }
    }

    /// Calls the handler at `path` on the ingress (`/Service/handler`,
    /// `/Object/key/handler`, `/Workflow/key/run`) with the JSON `body` (`null`: no body, for
    /// handlers without input) and waits for its result. Returns the status and the body as
    /// JSON (a JSON string when the body is not JSON, `null` when there is none).
    pub async fn call(&self, path: &str, body: Value) -> anyhow::Result<(u16, Value)> {
        let body = (!body.is_null()).then_some(body);
        let response = self.ingress_request("POST", path, body.as_ref()).await?;
        Ok((response.status, response.json()))
    }

    /// Starts the handler at `path` without waiting for it (`POST <path>/send`); a 202's body
    /// holds the `invocationId` (and `status`).
    pub async fn send(&self, path: &str, body: Value) -> anyhow::Result<(u16, Value)> {
        self.call(&format!("{}/send", path.trim_end_matches('/')), body)
            .await
    }

    /// Resolves the awakeable `id` with `value` (`POST /restate/awakeables/{id}/resolve`);
    /// works while no worker runs.
    pub async fn resolve_awakeable(&self, id: &str, value: Value) -> anyhow::Result<()> {
        let path = format!("/restate/awakeables/{id}/resolve");
        let response = self.ingress_request("POST", &path, Some(&value)).await?;
        if !response.is_success() {
            bail!(
                "resolving the awakeable {id} failed: {} {}",
                response.status,
                response.body
            );
        }
        Ok(())
    }

    /// Rejects the awakeable `id` with `reason` (`POST /restate/awakeables/{id}/reject`): the
    /// waiting handler sees a terminal error.
    pub async fn reject_awakeable(&self, id: &str, reason: &str) -> anyhow::Result<()> {
        let path = format!("/restate/awakeables/{id}/reject");
        let response = self
            .ingress_request("POST", &path, Some(&Value::String(reason.to_owned())))
            .await?;
        if !response.is_success() {
            bail!(
                "rejecting the awakeable {id} failed: {} {}",
                response.status,
                response.body
            );
        }
        Ok(())
    }

    /// The output of workflow `name`'s run with `key`, without waiting
    /// (`GET /restate/workflow/{name}/{key}/output`): `Some((status, body))` once it has
    /// completed (200 and its result, or the failure's status and body), `None` while it
    /// runs (470).
    pub async fn workflow_output(
        &self,
        name: &str,
        key: &str,
    ) -> anyhow::Result<Option<(u16, Value)>> {
        let path = format!("/restate/workflow/{name}/{key}/output");
        let response = self.ingress_request("GET", &path, None).await?;
        Ok((response.status != 470).then(|| (response.status, response.json())))
    }

    /// Waits up to `timeout` for workflow `name`'s run with `key` to complete
    /// (`GET /restate/workflow/{name}/{key}/attach`, which answers when it does), and returns
    /// the status and body of its output.
    pub async fn attach_workflow(
        &self,
        name: &str,
        key: &str,
        timeout: Duration,
    ) -> anyhow::Result<(u16, Value)> {
        let path = format!("/restate/workflow/{name}/{key}/attach");
        let response = http(self.ingress, "GET", &path, None, timeout).await?;
        Ok((response.status, response.json()))
    }

    /// `method path` on the ingress, with a JSON body when given.
    pub async fn ingress_request(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<HttpResponse> {
        http(self.ingress, method, path, body, REQUEST_TIMEOUT).await
    }

    /// `method path` on the admin API, with a JSON body when given.
    pub async fn admin_request(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<HttpResponse> {
        http(self.admin, method, path, body, REQUEST_TIMEOUT).await
    }

    /// Kills the server (SIGKILL: its data is thrown away with its directory) and waits for
    /// it, then removes its directory.
    pub fn stop(mut self) {
        self.kill();
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RestateServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The server's binary, found or installed once for the whole test binary.
pub fn binary() -> Result<PathBuf, String> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND.get_or_init(provision).clone()
}

/// `target/peers/restate-server-<VERSION>`.
pub fn install_dir() -> Result<PathBuf, String> {
    let target = super::target_dir().map_err(|e| format!("{e:#}"))?;
    Ok(target
        .join("peers")
        .join(format!("restate-server-{VERSION}")))
}

/// Where npm puts the binary under an installation's directory: the platform package's
/// `bin/restate-server` (the package `@restatedev/restate-server` itself only holds a Node.js
/// launcher that finds and runs it).
fn binary_in(home: &Path) -> Result<PathBuf, String> {
    let os = match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "darwin",
        other => return Err(format!("restate-server has no npm package for {other}")),
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => return Err(format!("restate-server has no npm package for {other}")),
    };
    Ok(home
        .join("node_modules")
        .join("@restatedev")
        .join(format!("restate-server-{os}-{arch}"))
        .join("bin")
        .join("restate-server"))
}

/// The installed binary; installs it first (in a directory of this process's, renamed into
/// place) when it is not there.
fn provision() -> Result<PathBuf, String> {
    let home = install_dir()?;
    let binary = binary_in(&home)?;
    if binary.is_file() {
        return Ok(binary);
    }
    let parent = home.parent().ok_or("the peers' directory has no parent")?;
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
    let building = parent.join(format!(
        "restate-server-{VERSION}.building-{}",
        std::process::id()
    ));
    eprintln!(
        "installing restate-server {VERSION} with npm into {} (once; about 225 MB)",
        home.display()
    );
    let started = Instant::now();
    if let Err(e) = npm_install(&building) {
        let _ = std::fs::remove_dir_all(&building);
        return Err(e);
    }
    match std::fs::rename(&building, &home) {
        Ok(()) => {}
        // Another test binary finished first: use its copy.
        Err(_) if binary.is_file() => {
            let _ = std::fs::remove_dir_all(&building);
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&building);
            return Err(format!(
                "cannot move restate-server into place at `{}`: {e}",
                home.display()
            ));
        }
    }
    eprintln!(
        "installed restate-server {VERSION} in {:.1?}",
        started.elapsed()
    );
    Ok(binary)
}

/// `npm install` of the pinned package into `dir`, and a check that its binary runs and is
/// the pinned version.
fn npm_install(dir: &Path) -> Result<(), String> {
    let package = format!("@restatedev/restate-server@{VERSION}");
    if let Err(e) = Command::new("npm")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
    {
        return Err(format!("{MISSING_NPM}\n(npm: {e})"));
    }
    npm::install_with_retries(
        &format!("`npm install {package}`"),
        || {
            let _ = std::fs::remove_dir_all(dir);
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create `{}`: {e}", dir.display()))
        },
        || {
            let mut npm = Command::new("npm");
            npm.args([
                "install",
                "--no-audit",
                "--no-fund",
                "--no-save",
                "--no-progress",
                // The launcher package's only dependency runs an analytics script on install.
                "--ignore-scripts",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(dir)
            .arg(&package)
            .env("SCARF_ANALYTICS", "false")
            .current_dir(dir);
            npm
        },
    )?;
    let binary = binary_in(dir)?;
    if !binary.is_file() {
        return Err(format!(
            "`npm install {package}` did not install the platform package's binary `{}` \
             (npm skips optional dependencies for other platforms)",
            binary.display()
        ));
    }
    let version = Command::new(&binary)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", binary.display()))?;
    let printed = String::from_utf8_lossy(&version.stdout);
    if !printed.contains(VERSION) {
        return Err(format!(
            "`{} --version` printed {printed:?}, not version {VERSION}",
            binary.display()
        ));
    }
    Ok(())
}
