//! Out past one machine: two replicas of the `mcp_server` example, as separate processes, each
//! `--http 127.0.0.1:0 --stateless`, behind a real load balancer (HAProxy, round robin, no
//! session affinity), used by the official MCP Python SDK through the balancer.
//!
//! - `replicas_behind_a_round_robin_balancer_serve_one_client`: many calls, all answered, by
//!   both replicas; policies (A4, A5), validation (S2) and redaction (E2, with E3 on the
//!   replica that served it) hold whichever replica serves a request, each request
//!   authenticated by its own bearer token; an approval (H6, protocol 2026-07-28) asked by one
//!   replica is answered on the other, where the call runs (each replica's log shows what it
//!   ran), since both seal questions with the key given in `MAINTENANCE_STATE_KEY` (H10); a
//!   client on an older protocol is served too, and told at once that a server without
//!   sessions cannot ask its user.
//! - `an_old_protocol_elicitation_is_refused_at_once_not_left_waiting` (H6): a client on an
//!   older protocol that declares elicitation in the request itself would be sent an
//!   `elicitation/create` whose answer no replica could route back to the call; it is answered
//!   at once instead of waiting forever.
//!
//! The replicas run the example's program (`tool_examples::serve::main`, all that
//! `examples/mcp_server.rs` does): this test binary starts itself again once per replica, as
//! `examples/tests/approvals_processes.rs` does (which shows a paused agent run written by one
//! process and resumed by another, H3). HAProxy comes from `$HAPROXY`, the `PATH` or
//! `/usr/sbin`; when it is missing and the test runs as root on a machine with `apt-get`, the
//! test installs it (`apt-get install haproxy`), else it fails saying what to install.
#![cfg(feature = "mcp")]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_runtime::mcp::NO_ELICITATION_STATELESS;

#[path = "../../tool-runtime/tests/support/mcp/peers.rs"]
#[allow(unreachable_pub)]
mod peers;
// HAProxy, found or installed (shared with tool-durable's load test).
mod haproxy;
use haproxy::haproxy;

/// The arguments of the example's program, for a child, separated by this character.
const ARGS_VARIABLE: &str = "SCALE_OUT_REPLICA_ARGS";
const SEPARATOR: char = '\u{1f}';
/// The key both replicas seal approval questions with (H10), as a deployment configures it.
const STATE_KEY: &str = "scale-out test key: thirty-two bytes or more";

/// In a child (when `SCALE_OUT_REPLICA_ARGS` is set): runs the `mcp_server` example's program
/// with those arguments, until it is killed. Otherwise it does nothing.
#[test]
fn child_runs_the_mcp_server() {
    let Ok(args) = std::env::var(ARGS_VARIABLE) else {
        return;
    };
    let args: Vec<String> = args.split(SEPARATOR).map(str::to_owned).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    if let Err(e) = runtime.block_on(tool_examples::serve::main(&args)) {
        eprintln!("mcp_server: {e}");
        std::process::exit(1);
    }
    std::process::exit(0);
}

#[test]
fn replicas_behind_a_round_robin_balancer_serve_one_client() {
    let deployment = Deployment::start("client");
    let python = python();
    let run = Command::new(python)
        .arg(client_script())
        .arg(deployment.url())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python starts");
    let output = wait_with_timeout(run, Duration::from_secs(120));
    let report = String::from_utf8_lossy(&output.stderr).into_owned();
    let logs = deployment.logs();
    assert!(
        output.status.success(),
        "the Python client's checks failed:\n{report}\n{logs}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary: Value = stdout
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| panic!("no summary from the client: {stdout}\n{report}"));
    assert_eq!(summary["protocol"], "2026-07-28", "{summary}");

    // Both replicas served calls, and each logged exactly the calls the balancer says it sent
    // it: nothing was served twice or lost between them.
    let served = &summary["calls_served"];
    for replica in &deployment.replicas {
        let log = replica.log();
        let by_proxy = |tool: &str| served[&replica.name][tool].as_u64().unwrap_or(0);
        let by_replica = |tool: &str| {
            let calls = log
                .matches(&format!("mcp_server: {tool} (request "))
                .count();
            u64::try_from(calls).unwrap_or(u64::MAX)
        };
        // A question (an `input_required` answer) is not a finished call, and is not logged.
        let questions = summary["questions"][&replica.name].as_u64().unwrap_or(0);
        assert!(by_proxy("lookup-window") > 0, "{summary}");
        assert_eq!(
            by_replica("lookup-window"),
            by_proxy("lookup-window"),
            "replica {}: {summary}\n{log}",
            replica.name
        );
        assert_eq!(
            by_replica("restart-service") + questions,
            by_proxy("restart-service"),
            "replica {}: {summary}\n{log}",
            replica.name
        );
    }

    // H6: the approved restart ran on the replica that took the answer, and only there.
    let answered_by = summary["answered_by"]
        .as_str()
        .expect("the retry's replica");
    assert_ne!(Some(answered_by), summary["asked_by"].as_str(), "{summary}");
    for replica in &deployment.replicas {
        let log = replica.log();
        let ran = log
            .lines()
            .filter(|line| line.contains("restart-service (request") && line.ends_with("success"))
            .count();
        assert_eq!(
            ran,
            usize::from(replica.name == answered_by),
            "replica {}:\n{log}",
            replica.name
        );
    }
    // E3: the error the client read as `the tool failed` is in a replica's log, unredacted.
    assert!(logs.contains("maint-db.internal:5432"), "{logs}");
    eprintln!("{report}");
}

#[test]
fn an_old_protocol_elicitation_is_refused_at_once_not_left_waiting() {
    let deployment = Deployment::start("raw");
    // A client on 2025-06-18 that declares elicitation in the request's own `_meta`: a server
    // with sessions would send `elicitation/create` and wait; without a session its answer
    // would be refused (or reach the other replica), so it must be refused now (H6).
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "restart-service",
        "arguments": {"service_id": "svc-42"},
        "_meta": {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}},
    }});
    let started = Instant::now();
    let (status, body) = post(deployment.proxy, "admin-token", &call);
    assert!(status.contains("200"), "{status} {body}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let answer: Value = serde_json::from_str(body.trim()).expect("a JSON answer");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"], NO_ELICITATION_STATELESS,
        "{answer}"
    );
    assert_eq!(
        answer["result"]["_meta"]["tool-runtime/outcome"], "denied",
        "{answer}"
    );
    // (On 2026-07-28 the same call is asked as an `input_required` result that any replica
    // takes back: the Python client's checks above.) The restart did not run.
    let logs = deployment.logs();
    assert!(
        !logs.contains("ended success"),
        "the restart never ran:\n{logs}"
    );
}

// ─── The deployment: two replicas and HAProxy ───────────────────────────────────────────────

/// A process this test started, killed when dropped, its standard error in a file.
struct Process {
    name: String,
    child: Child,
    stderr: PathBuf,
}

impl Process {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two stateless replicas of the example and HAProxy balancing between them; their
/// configuration and logs are in `dir`, removed with them.
struct Deployment {
    replicas: Vec<Process>,
    proxy_process: Process,
    proxy: SocketAddr,
    dir: PathBuf,
}

impl Drop for Deployment {
    fn drop(&mut self) {
        // The processes are killed when their fields are dropped, right after.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Deployment {
    fn start(test: &str) -> Self {
        let haproxy = haproxy();
        let dir = std::env::temp_dir().join(format!("scale-out-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let replicas: Vec<Process> = ["a", "b"]
            .into_iter()
            .map(|name| replica(name, &dir))
            .collect();
        let addresses: Vec<SocketAddr> = replicas.iter().map(served_address).collect();
        // The port is chosen free, then given to HAProxy: another process may take it in
        // between, so a proxy that could not bind is started again on another.
        let mut last = String::new();
        for attempt in 0..3 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free loopback port")
                .port();
            let proxy: SocketAddr = ([127, 0, 0, 1], port).into();
            let config = dir.join(format!("haproxy-{attempt}.cfg"));
            std::fs::write(&config, haproxy_config(proxy, &addresses)).expect("writes");
            let stderr = dir.join(format!("haproxy-{attempt}.log"));
            let child = Command::new(&haproxy)
                .arg("-db")
                .arg("-f")
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&stderr).expect("a log file"))
                .spawn()
                .unwrap_or_else(|e| panic!("`{}` cannot be run: {e}", haproxy.display()));
            let mut process = Process {
                name: "haproxy".into(),
                child,
                stderr,
            };
            if wait_listening(&mut process, proxy) {
                return Self {
                    replicas,
                    proxy_process: process,
                    proxy,
                    dir,
                };
            }
            last = process.log();
        }
        panic!("HAProxy did not start:\n{last}");
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.proxy)
    }

    /// Everything the replicas and the proxy logged, for failure messages.
    fn logs(&self) -> String {
        let mut text = String::new();
        for process in self.replicas.iter().chain([&self.proxy_process]) {
            text.push_str(&format!("--- {} ---\n{}\n", process.name, process.log()));
        }
        text
    }
}

/// Round robin over the replicas, per request, with no affinity of any kind; each answer
/// names the replica that served it (`X-Served-By`), for the client to report.
fn haproxy_config(proxy: SocketAddr, replicas: &[SocketAddr]) -> String {
    let mut config = format!(
        "global\n    maxconn 256\n\n\
         defaults\n    mode http\n    timeout connect 5s\n    timeout client 60s\n    \
         timeout server 60s\n\n\
         frontend mcp\n    bind {proxy}\n    default_backend replicas\n\n\
         backend replicas\n    balance roundrobin\n    \
         http-response set-header X-Served-By %s\n"
    );
    for (name, addr) in ["a", "b"].iter().zip(replicas) {
        config.push_str(&format!("    server {name} {addr}\n"));
    }
    config
}

/// Starts one replica: the example's program, `--http 127.0.0.1:0 --stateless`.
fn replica(name: &str, dir: &Path) -> Process {
    let stderr = dir.join(format!("replica-{name}.log"));
    let args = ["--http", "127.0.0.1:0", "--stateless"].join(&SEPARATOR.to_string());
    let child = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["child_runs_the_mcp_server", "--exact", "--nocapture"])
        .env(ARGS_VARIABLE, args)
        .env_remove("MAINTENANCE_TOKENS")
        // H10: the replicas share the key that seals their approval questions.
        .env("MAINTENANCE_STATE_KEY", STATE_KEY)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).expect("a log file"))
        .spawn()
        .expect("the replica starts");
    Process {
        name: name.to_owned(),
        child,
        stderr,
    }
}

/// The address a replica serves at, from the line it prints when it is ready.
fn served_address(replica: &Process) -> SocketAddr {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let log = replica.log();
        let url = log
            .lines()
            .find_map(|line| line.split(" at http://").nth(1))
            .and_then(|rest| rest.split('/').next());
        if let Some(addr) = url.and_then(|addr| addr.parse().ok()) {
            assert!(log.contains("stateless"), "{log}");
            assert!(
                log.contains("state key from MAINTENANCE_STATE_KEY"),
                "{log}"
            );
            return addr;
        }
        assert!(
            Instant::now() < deadline,
            "replica {} did not start:\n{log}",
            replica.name
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `process` accepts connections on `addr` within ten seconds (false if it exited).
fn wait_listening(process: &mut Process, addr: SocketAddr) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if matches!(process.child.try_wait(), Ok(Some(_))) {
            return false;
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// One raw JSON-RPC POST on protocol 2025-06-18 with `token`: the status line and the body.
/// Fails when the whole answer has not come within ten seconds (an event stream kept open with
/// keep-alive pings counts as no answer).
fn post(addr: SocketAddr, token: &str, body: &Value) -> (String, String) {
    let mut stream = TcpStream::connect(addr).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .expect("a timeout");
    let body = body.to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("writes");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut answer = Vec::new();
    let mut chunk = [0_u8; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => panic!("the answer could not be read: {e}"),
        }
        assert!(
            Instant::now() < deadline,
            "no complete answer within 10 s; so far:\n{}",
            String::from_utf8_lossy(&answer)
        );
    }
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.lines().next().unwrap_or_default().to_owned();
    (status, body.to_owned())
}

fn wait_with_timeout(mut child: Child, limit: Duration) -> std::process::Output {
    let deadline = Instant::now() + limit;
    while matches!(child.try_wait(), Ok(None)) {
        if Instant::now() > deadline {
            let _ = child.kill();
            let output = child.wait_with_output().expect("the client's output");
            panic!(
                "the Python client hung:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("the client's output")
}

// ─── The peers: the Python SDK and HAProxy ──────────────────────────────────────────────────

fn client_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("tool-runtime")
        .join("tests")
        .join("support")
        .join("mcp")
        .join("scale_out_client.py")
}

/// The interpreter with the pinned MCP Python SDK, provisioned as for the other MCP tests.
fn python() -> PathBuf {
    static CHECKED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match CHECKED.get_or_init(peers::interpreter) {
        Ok(python) => python.clone(),
        Err(message) => panic!("{message}"),
    }
}
