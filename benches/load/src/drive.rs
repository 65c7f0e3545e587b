//! The load generator and the measurement: starts the three servers, checks that they answer
//! the same, warms each up, then measures them one at a time, in rounds of rotating order.

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_bench::{TOOL_NAME, args};

use crate::client::{Answer, Connection, preview};

/// How a run is bounded and shaped.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Concurrent clients, one kept-alive connection each.
    pub clients: usize,
    /// Measured rounds; each measures every server once.
    pub rounds: usize,
    /// At most this many calls per measurement…
    pub max_calls: u64,
    /// …or this long, whichever comes first.
    pub max_time: Duration,
    /// The unmeasured load before the rounds, per server.
    pub warm_up: Duration,
    /// Worker threads of the two Rust servers' tokio runtimes.
    pub workers: usize,
    /// The Python interpreter and the server script, when the Python server is measured.
    pub python: Option<(PathBuf, PathBuf)>,
}

impl Settings {
    /// From the environment: `QUICK=1` for a short run; `MCP_LOAD_CLIENTS`,
    /// `MCP_LOAD_ROUNDS`, `MCP_LOAD_SECS`, `MCP_LOAD_CALLS`, `MCP_LOAD_WORKERS` override.
    pub fn from_env(python: Option<(PathBuf, PathBuf)>) -> Self {
        let quick = std::env::var("QUICK").is_ok_and(|q| q == "1");
        let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<f64>().ok());
        let (rounds, secs, calls, warm) = if quick {
            (2.0, 1.0, 20_000.0, 0.5)
        } else {
            (5.0, 4.0, 200_000.0, 2.0)
        };
        Self {
            clients: var("MCP_LOAD_CLIENTS").unwrap_or(64.0).clamp(1.0, 1024.0) as usize,
            rounds: var("MCP_LOAD_ROUNDS").unwrap_or(rounds).clamp(1.0, 100.0) as usize,
            max_time: Duration::from_secs_f64(
                var("MCP_LOAD_SECS").unwrap_or(secs).clamp(0.1, 600.0),
            ),
            max_calls: var("MCP_LOAD_CALLS").unwrap_or(calls).clamp(1.0, 1e9) as u64,
            warm_up: Duration::from_secs_f64(warm),
            workers: var("MCP_LOAD_WORKERS").unwrap_or(2.0).clamp(1.0, 64.0) as usize,
            python,
        }
    }
}

/// One server process.
struct Server {
    key: &'static str,
    label: &'static str,
    child: Child,
    addr: SocketAddr,
    /// What the server said after its address (the Python SDK's version).
    version: String,
    /// The access token to send, when the server announced one (`… bearer TOKEN`).
    bearer: Option<String>,
}

impl Server {
    fn start(key: &'static str, label: &'static str, mut command: Command) -> Result<Self, String> {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the {key} server ({command:?}): {e}"))?;
        let line = child
            .stdout
            .take()
            .map(|out| {
                let mut line = String::new();
                BufReader::new(out).read_line(&mut line).map(|_| line)
            })
            .transpose()
            .map_err(|e| format!("cannot read the {key} server's address: {e}"))?
            .unwrap_or_default();
        let mut words = line.split_whitespace();
        let addr = match (words.next(), words.next().map(str::parse::<SocketAddr>)) {
            (Some("listening"), Some(Ok(addr))) => addr,
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the {key} server did not announce its address (it said `{}`)",
                    line.trim()
                ));
            }
        };
        let rest: Vec<&str> = words.collect();
        let (version, bearer) = match rest.as_slice() {
            ["bearer", token] => (String::new(), Some((*token).to_owned())),
            _ => (rest.join(" "), None),
        };
        Ok(Self {
            key,
            label,
            child,
            addr,
            version,
            bearer,
        })
    }

    /// A client of this server, with its access token when it wants one.
    fn connection(&self) -> Connection {
        Connection::with_bearer(self.addr, self.bearer.as_deref())
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server process's CPU time so far (user + system), in seconds.
    fn cpu_seconds(&self) -> Result<f64, String> {
        cpu_seconds(&format!("/proc/{}/stat", self.pid()))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// User + system CPU time of the process whose `stat` file is at `path`, in seconds.
fn cpu_seconds(path: &str) -> Result<f64, String> {
    let stat = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    // Fields after the command name (which may hold spaces), from field 3 (state) on:
    // utime is field 14, stime field 15.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or_else(|| format!("{path}: no command name"))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| -> Result<f64, String> {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .ok_or_else(|| format!("{path}: no field {}", i + 3))
    };
    // SAFETY: sysconf reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Ok((ticks(11)? + ticks(12)?) / per_second.max(1.0))
}

/// The figures of one measurement of one server.
#[derive(Debug, Clone)]
struct Measured {
    calls: u64,
    errors: u64,
    secs: f64,
    p50_ms: f64,
    p99_ms: f64,
    server_cpu_s: f64,
    client_cpu_s: f64,
    first_error: Option<String>,
}

impl Measured {
    fn calls_per_s(&self) -> f64 {
        self.calls as f64 / self.secs
    }

    fn cpu_per_1000(&self) -> f64 {
        self.server_cpu_s * 1000.0 / (self.calls as f64).max(1.0)
    }

    fn to_json(&self) -> Value {
        json!({
            "calls": self.calls,
            "errors": self.errors,
            "secs": self.secs,
            "calls_per_s": self.calls_per_s(),
            "p50_ms": self.p50_ms,
            "p99_ms": self.p99_ms,
            "server_cpu_s": self.server_cpu_s,
            "server_cpu_s_per_1000": self.cpu_per_1000(),
            "client_cpu_s": self.client_cpu_s,
            "first_error": self.first_error,
        })
    }
}

/// Runs everything and returns the JSON of the figures.
///
/// # Errors
///
/// When a server cannot start, or does not answer the check's calls as the others do.
pub async fn run(settings: Settings) -> Result<Value, String> {
    let (servers, skipped) = start_servers(&settings)?;
    let expected = tool_bench::shared::expected_valid();
    let valid = std::str::from_utf8(args::VALID).map_err(|e| e.to_string())?;
    let mut checks = serde_json::Map::new();
    for server in &servers {
        checks.insert(
            server.key.to_owned(),
            check(server, &expected, valid).await?,
        );
    }
    for server in &servers {
        let warm = Settings {
            max_time: settings.warm_up,
            ..settings.clone()
        };
        let m = measure(server, &warm, &expected, valid).await?;
        eprintln!(
            "  warm-up {}: {} calls, {:.0} calls/s, {} errors",
            server.key,
            m.calls,
            m.calls_per_s(),
            m.errors
        );
    }
    let rounds = measure_rounds(&servers, &settings, &expected, valid).await?;
    let ratio = |a: &str, b: &str| throughput_ratio(&servers, &rounds, a, b);
    Ok(json!({
        "clients": settings.clients,
        "rounds": settings.rounds,
        "max_calls": settings.max_calls,
        "max_secs": settings.max_time.as_secs_f64(),
        "warm_up_secs": settings.warm_up.as_secs_f64(),
        "workers": settings.workers,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "protocol_version": crate::client::PROTOCOL_VERSION,
        "skipped": skipped,
        "servers": summary(&servers, &rounds, &checks),
        "throughput_ratio": {
            "ours_over_rmcp": ratio("ours", "rmcp"),
            "ours_over_python": ratio("ours", "python"),
            "ours_jwt_over_ours": ratio("ours-jwt", "ours"),
        },
    }))
}

/// Starts the servers measured, and names those that are not (the Python one without an
/// interpreter).
fn start_servers(settings: &Settings) -> Result<(Vec<Server>, Vec<&'static str>), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let workers = settings.workers.to_string();
    let rust = |which: &str| {
        let mut command = Command::new(&exe);
        command.args(["serve", which, "--workers", &workers]);
        command
    };
    let mut servers = vec![
        Server::start(
            "ours",
            "tool-runtime `McpServer` (stateless, JSON answers; availability, validation, redaction)",
            rust("ours"),
        )?,
        Server::start(
            "ours-jwt",
            "tool-runtime `McpServer` as an OAuth protected resource (a JWT verified on every call)",
            rust("ours-jwt"),
        )?,
        Server::start(
            "rmcp",
            "bare rmcp `StreamableHttpService` (stateless, JSON answers; `#[tool_router]`)",
            rust("rmcp"),
        )?,
    ];
    let mut skipped = Vec::new();
    match &settings.python {
        Some((python, script)) => {
            let mut command = Command::new(python);
            command.arg(script);
            servers.push(Server::start(
                "python",
                "Python SDK `MCPServer` (FastMCP; stateless_http, json_response; uvicorn)",
                command,
            )?);
        }
        None => skipped.push("python"),
    }
    Ok((servers, skipped))
}

/// The check of one server: the same result for the valid arguments, an error for the invalid
/// ones, each a `tools/call` sent without `initialize` first.
async fn check(server: &Server, expected: &Value, valid: &str) -> Result<Value, String> {
    let invalid = std::str::from_utf8(args::INVALID).map_err(|e| e.to_string())?;
    let mut conn = server.connection();
    let ok = match conn.call(TOOL_NAME, valid).await {
        Ok(Answer::Result(text)) => {
            let got: Value = serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{}: the valid call's text is not JSON ({e}): {text}",
                    server.key
                )
            })?;
            if got != *expected {
                return Err(format!(
                    "{}: the valid call returned {got}, not {expected}",
                    server.key
                ));
            }
            text
        }
        other => {
            return Err(format!(
                "{}: the valid call (sent without `initialize`) was answered {}",
                server.key,
                describe(&other)
            ));
        }
    };
    let error = match conn.call(TOOL_NAME, invalid).await {
        Ok(Answer::ToolError(text)) => json!({"kind": "isError result", "text": text}),
        Ok(Answer::RpcError(text)) => json!({"kind": "JSON-RPC error", "text": text}),
        other => {
            return Err(format!(
                "{}: the invalid call was answered {}, not an error",
                server.key,
                describe(&other)
            ));
        }
    };
    eprintln!(
        "  {}: valid → {}; invalid → {}",
        server.key,
        preview(&ok),
        preview(error["text"].as_str().unwrap_or_default())
    );
    Ok(json!({"valid": ok, "invalid": error, "needs_initialize": false}))
}

/// Each round measures every server once, in an order rotated by the round; each entry names
/// its server by index.
async fn measure_rounds(
    servers: &[Server],
    settings: &Settings,
    expected: &Value,
    valid: &str,
) -> Result<Vec<Vec<(usize, Measured)>>, String> {
    let mut rounds: Vec<Vec<(usize, Measured)>> = Vec::new();
    for round in 0..settings.rounds {
        let mut this = Vec::new();
        for k in 0..servers.len() {
            let i = (k + round) % servers.len();
            let server = &servers[i];
            let m = measure(server, settings, expected, valid).await?;
            eprintln!(
                "  round {} {}: {} calls in {:.2} s, {:.0} calls/s, p50 {:.2} ms, p99 {:.2} ms, \
                 {:.3} CPU s / 1000 calls, {} errors",
                round + 1,
                server.key,
                m.calls,
                m.secs,
                m.calls_per_s(),
                m.p50_ms,
                m.p99_ms,
                m.cpu_per_1000(),
                m.errors
            );
            this.push((i, m));
        }
        rounds.push(this);
    }
    Ok(rounds)
}

/// Each server's figures: its check, its rounds and their medians.
fn summary(
    servers: &[Server],
    rounds: &[Vec<(usize, Measured)>],
    checks: &serde_json::Map<String, Value>,
) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for (i, server) in servers.iter().enumerate() {
        let per_round: Vec<&Measured> = rounds
            .iter()
            .flat_map(|r| r.iter().filter(|(j, _)| *j == i).map(|(_, m)| m))
            .collect();
        let med = |f: &dyn Fn(&Measured) -> f64| median(per_round.iter().map(|m| f(m)).collect());
        out.insert(
            server.key.to_owned(),
            json!({
                "label": server.label,
                "version": server.version,
                "check": checks.get(server.key),
                "rounds": per_round.iter().map(|m| m.to_json()).collect::<Vec<_>>(),
                "median": {
                    "calls_per_s": med(&Measured::calls_per_s),
                    "p50_ms": med(&|m| m.p50_ms),
                    "p99_ms": med(&|m| m.p99_ms),
                    "server_cpu_s_per_1000": med(&Measured::cpu_per_1000),
                    "client_cpu_s_per_1000": med(&|m| m.client_cpu_s * 1000.0 / (m.calls as f64).max(1.0)),
                },
                "calls": per_round.iter().map(|m| m.calls).sum::<u64>(),
                "errors": per_round.iter().map(|m| m.errors).sum::<u64>(),
            }),
        );
    }
    out
}

/// Server `a`'s throughput over server `b`'s, round by round, and their median (`null` when
/// either was not measured).
fn throughput_ratio(
    servers: &[Server],
    rounds: &[Vec<(usize, Measured)>],
    a: &str,
    b: &str,
) -> Value {
    let find = |round: &[(usize, Measured)], key: &str| {
        let i = servers.iter().position(|s| s.key == key)?;
        round
            .iter()
            .find(|(j, _)| *j == i)
            .map(|(_, m)| m.calls_per_s())
    };
    let per_round: Vec<f64> = rounds
        .iter()
        .filter_map(|r| Some(find(r, a)? / find(r, b)?))
        .collect();
    if per_round.is_empty() {
        return Value::Null;
    }
    json!({"median": median(per_round.clone()), "per_round": per_round})
}

fn describe(answer: &Result<Answer, crate::client::CallError>) -> String {
    match answer {
        Ok(Answer::Result(t)) => format!("a result `{}`", preview(t)),
        Ok(Answer::ToolError(t)) => format!("an isError result `{}`", preview(t)),
        Ok(Answer::RpcError(t)) => format!("a JSON-RPC error `{}`", preview(t)),
        Err(e) => format!("with a failure: {e}"),
    }
}

/// One measurement of `server`: `settings.clients` connections, opened first, call the tool
/// with the valid arguments until `max_calls` calls were made or `max_time` passed. Every
/// answer is read to its end and checked: a call that is not answered with the expected
/// result is counted as an error.
async fn measure(
    server: &Server,
    settings: &Settings,
    expected: &Value,
    valid: &str,
) -> Result<Measured, String> {
    let mut conns = Vec::with_capacity(settings.clients);
    for _ in 0..settings.clients {
        let mut conn = server.connection();
        conn.connect()
            .await
            .map_err(|e| format!("cannot connect to the {} server: {e}", server.key))?;
        conns.push(conn);
    }
    let issued = Arc::new(AtomicU64::new(0));
    let max_calls = settings.max_calls;
    let cpu0 = server.cpu_seconds()?;
    let client0 = cpu_seconds("/proc/self/stat")?;
    let began = Instant::now();
    let deadline = began + settings.max_time;
    let tasks: Vec<_> = conns
        .into_iter()
        .map(|mut conn| {
            let issued = Arc::clone(&issued);
            let expected = expected.clone();
            let valid = valid.to_owned();
            tokio::spawn(async move {
                load(&mut conn, &issued, max_calls, deadline, &expected, &valid).await
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut errors = 0;
    let mut first_error = None;
    for task in tasks {
        let (l, e, f) = task
            .await
            .map_err(|e| format!("a load client failed: {e}"))?;
        latencies.extend(l);
        errors += e;
        if first_error.is_none() {
            first_error = f;
        }
    }
    let secs = began.elapsed().as_secs_f64();
    let server_cpu_s = server.cpu_seconds()? - cpu0;
    let client_cpu_s = cpu_seconds("/proc/self/stat")? - client0;
    latencies.sort_unstable();
    let at = |q: f64| {
        let last = latencies.len().saturating_sub(1);
        let i = ((latencies.len() as f64 * q) as usize).min(last);
        latencies
            .get(i)
            .map_or(f64::NAN, |&us| f64::from(us) / 1000.0)
    };
    Ok(Measured {
        calls: latencies.len() as u64,
        errors,
        secs,
        p50_ms: at(0.5),
        p99_ms: at(0.99),
        server_cpu_s,
        client_cpu_s,
        first_error,
    })
}

/// One load client's calls until `max_calls` were issued (by all of them, counted in
/// `issued`) or `deadline`: each call's latency in microseconds, the errors and the first one.
async fn load(
    conn: &mut Connection,
    issued: &AtomicU64,
    max_calls: u64,
    deadline: Instant,
    expected: &Value,
    valid: &str,
) -> (Vec<u32>, u64, Option<String>) {
    let mut latencies_us: Vec<u32> = Vec::with_capacity(4096);
    let mut errors = 0u64;
    let mut first_error = None;
    while issued.fetch_add(1, Ordering::Relaxed) < max_calls && Instant::now() < deadline {
        let t0 = Instant::now();
        let answer =
            tokio::time::timeout(Duration::from_secs(10), conn.call(TOOL_NAME, valid)).await;
        let elapsed = t0.elapsed();
        let failure = match answer {
            Ok(Ok(Answer::Result(text))) => match serde_json::from_str::<Value>(&text) {
                Ok(v) if v == *expected => None,
                _ => Some(format!("a wrong result: {}", preview(&text))),
            },
            Ok(other) => Some(describe(&other)),
            Err(_) => {
                conn.reset();
                Some("no answer within 10 s".to_owned())
            }
        };
        latencies_us.push(u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX));
        if let Some(failure) = failure {
            errors += 1;
            first_error.get_or_insert(failure);
        }
    }
    (latencies_us, errors, first_error)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}
