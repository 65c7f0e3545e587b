//! T5, measured: the `mcp_server` example's program (`--http`, its default session bounds:
//! 1,000 live sessions in all, 100 per principal), run as a separate process, is sent
//! thousands of `initialize`s over kept-alive connections by a dozen guests; its resident
//! memory (`VmRSS`) is read before, once the bounds are reached, and after thousands more
//! attempts. Past the bounds every attempt is refused (`429` for a principal at its bound,
//! `503` once the server is full, each with `Retry-After`) and the memory stays flat. Without
//! the bounds, each `initialize` held a session of about 53 KB for 5 minutes: the 6,500
//! attempts here would have held some 340 MB.
//!
//! The server is this test binary started again (as `scale_out.rs` starts its replicas),
//! running `tool_examples::serve::main`, all that `examples/mcp_server.rs` does. Linux only
//! (`/proc/<pid>/status`).
#![cfg(all(feature = "mcp", target_os = "linux"))]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../../tool-runtime/tests/support/raw_http.rs"]
mod raw_http;

use raw_http::{RawConnection, RawResponse, initialize};

/// Set in the child: it runs the example's program with `--http 127.0.0.1:0`.
const CHILD_VARIABLE: &str = "T5_MEMORY_SERVER";
/// The guests' tokens: `MAINTENANCE_TOKENS` for the child.
const GUESTS: usize = 12;
/// The example's bounds (`HttpOptions`' defaults).
const TOTAL: usize = 1_000;
const PER_PRINCIPAL: usize = 100;

/// In a child (when `T5_MEMORY_SERVER` is set): runs the `mcp_server` example's program over
/// HTTP until it is killed. Otherwise it does nothing.
#[test]
fn child_runs_the_mcp_server() {
    if std::env::var_os(CHILD_VARIABLE).is_none() {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let args = ["--http".to_owned(), "127.0.0.1:0".to_owned()];
    if let Err(e) = runtime.block_on(tool_examples::serve::main(&args)) {
        eprintln!("mcp_server: {e}");
        std::process::exit(1);
    }
    std::process::exit(0);
}

/// The server process, killed when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start() -> Self {
        let tokens: Vec<String> = (0..GUESTS)
            .map(|i| format!("g{i}=guest{i}:guest"))
            .collect();
        let mut child = Command::new(std::env::current_exe().expect("the test binary"))
            .args(["child_runs_the_mcp_server", "--exact", "--nocapture"])
            .env(CHILD_VARIABLE, "1")
            .env("MAINTENANCE_TOKENS", tokens.join(","))
            .env_remove("MAINTENANCE_ALLOWED_HOSTS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let stderr = child.stderr.take().expect("piped");
        let mut lines = BufReader::new(stderr).lines();
        let addr = loop {
            let line = lines
                .next()
                .expect("the server says where it serves")
                .expect("readable");
            let url = line.split(" at http://").nth(1);
            if let Some(addr) = url.and_then(|rest| rest.split('/').next()) {
                break addr.parse().expect("an address");
            }
        };
        // Keep draining its standard error, so that it never blocks writing.
        std::thread::spawn(move || for _ in lines {});
        Self { child, addr }
    }

    /// Its resident memory, in KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the server runs");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("a VmRSS line")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the attempts were answered.
#[derive(Debug, Default)]
struct Tally {
    opened: usize,
    per_principal: usize,
    server_full: usize,
}

/// Sends `attempts` `initialize`s, the guest of each chosen by `guest`, over kept-alive
/// connections (one per guest, opened again after each refusal, which closes it).
async fn attempt(addr: SocketAddr, attempts: usize, guest: impl Fn(usize) -> usize) -> Tally {
    let mut connections = Vec::with_capacity(GUESTS);
    for _ in 0..GUESTS {
        connections.push(RawConnection::open(addr).await);
    }
    let mut tally = Tally::default();
    for n in 0..attempts {
        let g = guest(n);
        let token = format!("Bearer g{g}");
        let response: RawResponse = connections[g]
            .post(&[("Authorization", &token)], &initialize())
            .await;
        match response.status {
            200 => {
                assert!(response.session().is_some(), "{response:?}");
                tally.opened += 1;
            }
            429 | 503 => {
                let retry = response
                    .header("retry-after")
                    .and_then(|v| v.parse::<u64>().ok());
                assert_eq!(retry, Some(60), "{response:?}");
                assert!(response.closes(), "{response:?}");
                assert!(response.session().is_none(), "{response:?}");
                if response.status == 429 {
                    tally.per_principal += 1;
                } else {
                    tally.server_full += 1;
                }
            }
            _ => panic!("attempt {n}: {response:?}"),
        }
        if response.closes() {
            connections[g] = RawConnection::open(addr).await;
        }
    }
    tally
}

/// T5: past the bounds, `initialize`s are refused with `429` or `503` and `Retry-After`, and
/// the server's memory stays flat; each session it holds costs tens of KB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t5_sessions_past_the_bounds_are_refused_and_memory_stays_flat() {
    let started = Instant::now();
    let server = Server::start();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = server.rss_kib();

    // Guest 0 asks for 300 sessions and gets its 100; the others fill the server.
    let first = attempt(server.addr, 300, |_| 0).await;
    assert_eq!(
        (first.opened, first.per_principal, first.server_full),
        (PER_PRINCIPAL, 200, 0)
    );
    let rest = attempt(server.addr, 1_200, |n| 1 + n % (GUESTS - 1)).await;
    assert_eq!(first.opened + rest.opened, TOTAL, "{rest:?}");
    assert_eq!(rest.server_full, 1_200 - rest.opened, "{rest:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let full = server.rss_kib();

    // The server is full: 5,000 more attempts, from every guest, open nothing.
    let past = attempt(server.addr, 5_000, |n| n % GUESTS).await;
    assert_eq!(past.opened, 0, "{past:?}");
    assert!(past.per_principal > 0 && past.server_full > 0, "{past:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = server.rss_kib();

    let per_session = (full.saturating_sub(before)) as f64 / TOTAL as f64;
    eprintln!(
        "T5 memory: {before} KiB at start, {full} KiB with {TOTAL} sessions \
         ({per_session:.1} KiB per session), {after} KiB after 5,000 refused attempts \
         ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    // Flat past the bounds: 5,000 refusals add (almost) nothing.
    assert!(
        after.saturating_sub(full) < 8 * 1024,
        "{full} KiB -> {after} KiB"
    );
    // The sessions held are bounded: 1,000 of them in well under 100 MiB (about 53 KB
    // each), where the 6,500 attempts would have held some 340 MB unbounded.
    assert!(
        after.saturating_sub(before) < 100 * 1024,
        "{before} KiB -> {after} KiB"
    );
    assert!(per_session < 96.0, "{per_session} KiB per session");
}
