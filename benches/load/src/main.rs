//! MCP over streamable HTTP under load (`benches/run.sh`, figure 5): tool-runtime's
//! `McpServer`, a bare rmcp server and the official Python SDK's server, each serving the
//! harness's `triage-ticket` tool from a process of its own on 127.0.0.1, each measured in
//! turn under the same load.
//!
//! ```text
//! mcp-load run --out FILE [--python PYTHON --script benches/load/python/server.py]
//! mcp-load serve ours|ours-jwt|rmcp [--workers N]
//! mcp-load call ADDR CALLS [BEARER]
//! ```
//!
//! `run` starts the servers (`serve` runs one: the Rust servers are this program), checks
//! that each answers the valid call with the same result and the invalid one with an error,
//! warms each up, then measures them one at a time, in rounds of rotating order; it writes
//! the figures as JSON to `FILE`. See `drive::Settings` for the bounds. `call` makes `CALLS`
//! calls of the valid arguments over one kept-alive connection to a server at `ADDR`, one
//! after the other, with the access token `BEARER` when given (`ours-jwt` announces it): to
//! profile a server, run it under valgrind, then call it.

mod client;
mod drive;
mod issuer;
mod serve;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let result = match args.first().map(String::as_str) {
        Some("serve") => {
            let workers = flag("--workers").and_then(|w| w.parse().ok()).unwrap_or(2);
            match args.get(1).map(String::as_str) {
                Some("ours") => serve::serve(serve::Which::Ours, workers),
                Some("ours-jwt") => serve::serve(serve::Which::OursJwt, workers),
                Some("rmcp") => serve::serve(serve::Which::Rmcp, workers),
                _ => Err("serve ours|ours-jwt|rmcp [--workers N]".to_owned()),
            }
        }
        Some("run") => run(
            flag("--out").map(PathBuf::from),
            flag("--python").map(PathBuf::from),
            flag("--script").map(PathBuf::from),
        ),
        Some("call") => call(args.get(1), args.get(2), args.get(3)),
        _ => Err(
            "usage: mcp-load run --out FILE [--python PYTHON --script SERVER.py] | \
             mcp-load serve ours|ours-jwt|rmcp [--workers N] | mcp-load call ADDR CALLS [BEARER]"
                .to_owned(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-load: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(
    out: Option<PathBuf>,
    python: Option<PathBuf>,
    script: Option<PathBuf>,
) -> Result<(), String> {
    let out = out.ok_or("run needs --out FILE")?;
    let python = match (python, script) {
        (Some(p), Some(s)) => Some((p, s)),
        (None, None) => None,
        _ => return Err("--python and --script go together".to_owned()),
    };
    let settings = drive::Settings::from_env(python);
    eprintln!("  {settings:?}");
    // The load generator: one thread, so that it takes as little of the machine as it can.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build the load generator's runtime: {e}"))?;
    let figures = runtime.block_on(drive::run(settings))?;
    let text = serde_json::to_string_pretty(&figures).map_err(|e| e.to_string())?;
    std::fs::write(&out, text).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(())
}

fn call(
    addr: Option<&String>,
    calls: Option<&String>,
    bearer: Option<&String>,
) -> Result<(), String> {
    let usage = || "call ADDR CALLS [BEARER]".to_owned();
    let addr: std::net::SocketAddr = addr.ok_or_else(usage)?.parse().map_err(|_| usage())?;
    let calls: u64 = calls.ok_or_else(usage)?.parse().map_err(|_| usage())?;
    let valid = std::str::from_utf8(tool_bench::args::VALID).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build a runtime: {e}"))?;
    runtime.block_on(async {
        let mut conn = client::Connection::with_bearer(addr, bearer.map(String::as_str));
        for _ in 0..calls {
            match conn.call(tool_bench::TOOL_NAME, valid).await {
                Ok(client::Answer::Result(_)) => {}
                Ok(other) => return Err(format!("answered {other:?}")),
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    })
}
