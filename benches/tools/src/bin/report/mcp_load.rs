//! Section 5 of the table: MCP over streamable HTTP under load (`bench-results/mcp-load.json`,
//! written by `benches/load`'s `mcp-load run`), with its targets.

use std::fmt::Write as _;

use serde_json::Value;

use super::verdict;

/// The servers, in the table's order: key in the JSON, label.
const SERVERS: [(&str, &str); 4] = [
    (
        "ours",
        "**tool-runtime** `McpServer` (availability, validation, redaction)",
    ),
    (
        "ours-jwt",
        "tool-runtime `McpServer`, an OAuth protected resource (a JWT on every call)",
    ),
    (
        "rmcp",
        "bare rmcp `StreamableHttpService` + `#[tool_router]`",
    ),
    ("python", "Python SDK `MCPServer` (FastMCP) on uvicorn"),
];

/// Appends section 5 to `s`, if the run measured it.
pub fn render(load: Option<&Value>, s: &mut String) {
    let Some(v) = load else {
        return;
    };
    s.push_str("### 5. MCP over HTTP under load\n\n");
    let num = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let python_version = v["servers"]["python"]["version"]
        .as_str()
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "The same tool served over MCP streamable HTTP on 127.0.0.1 by three servers, each in a \
         process of its own, stateless and answering with JSON bodies. {} concurrent clients \
         (kept-alive HTTP/1.1 connections, one call in flight each) send `tools/call` with the \
         valid arguments — no `initialize`: every server accepts the call alone — and check \
         every answer. One server at a time, after a warm-up; at most {} calls or {} s per \
         measurement, {} rounds in rotating order; medians over the rounds. The Rust servers \
         run on a tokio runtime of {} worker threads, the load generator on one thread, on the \
         same {} cores. *server CPU*: the server process's user + system time \
         (`/proc/PID/stat`). {}\n",
        num("clients"),
        num("max_calls"),
        num("max_secs"),
        num("rounds"),
        num("workers"),
        num("cores"),
        if python_version.is_empty() {
            String::new()
        } else {
            format!("Python SDK: {python_version}.")
        },
    );
    servers(v, s);
    ratios(v, s);
}

/// The table of the servers' figures.
fn servers(v: &Value, s: &mut String) {
    let median = |key: &str, field: &str| v["servers"][key]["median"][field].as_f64();
    s.push_str(
        "| server | calls/s | throughput ratio to tool-runtime | p50 ms | p99 ms | server CPU s per 1,000 calls | errors / calls |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    let ours = median("ours", "calls_per_s");
    for (key, label) in SERVERS {
        let server = &v["servers"][key];
        if server.is_null() {
            let _ = writeln!(s, "| {label} | not measured | | | | | |");
            continue;
        }
        let rate = median(key, "calls_per_s");
        let _ = writeln!(
            s,
            "| {label} | {} | {} | {} | {} | {} | {} / {} |",
            fixed(rate, 0),
            match (rate, ours) {
                (Some(r), Some(o)) if o > 0.0 => format!("{:.2}×", r / o),
                _ => "–".to_owned(),
            },
            fixed(median(key, "p50_ms"), 2),
            fixed(median(key, "p99_ms"), 2),
            fixed(median(key, "server_cpu_s_per_1000"), 3),
            server["errors"],
            server["calls"],
        );
    }
}

/// The throughput and CPU ratios across the rounds, and the targets.
fn ratios(v: &Value, s: &mut String) {
    let median = |key: &str, field: &str| v["servers"][key]["median"][field].as_f64();
    let ratio = |k: &str| v["throughput_ratio"][k]["median"].as_f64();
    let spread = |k: &str| {
        let per: Vec<f64> = v["throughput_ratio"][k]["per_round"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
        let lo = per.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = per.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if per.is_empty() {
            String::new()
        } else {
            format!(" [rounds {lo:.2}–{hi:.2}]")
        }
    };
    let cpu = |key: &str| {
        median("ours", "server_cpu_s_per_1000")
            .zip(median(key, "server_cpu_s_per_1000"))
            .map(|(o, p)| o / p)
    };
    let _ = writeln!(
        s,
        "\nThroughput of tool-runtime, median of the per-round ratios: {}{} bare rmcp's, {}{} \
         the Python SDK's. Server CPU per call of tool-runtime: {} bare rmcp's, {} the Python \
         SDK's.\n",
        times(ratio("ours_over_rmcp")),
        spread("ours_over_rmcp"),
        times(ratio("ours_over_python")),
        spread("ours_over_python"),
        times(cpu("rmcp")),
        times(cpu("python")),
    );
    let _ = writeln!(
        s,
        "As an OAuth protected resource (every call's bearer token a JWT checked against its \
         issuer's JWKS, Z2), tool-runtime keeps {}{} of its throughput without authorization \
         (target ≥ 0.9×: {}); server CPU per call {} the unprotected server's.\n",
        times(ratio("ours_jwt_over_ours")),
        spread("ours_jwt_over_ours"),
        verdict(ratio("ours_jwt_over_ours").map(|r| r >= 0.9)),
        times(
            median("ours-jwt", "server_cpu_s_per_1000")
                .zip(median("ours", "server_cpu_s_per_1000"))
                .map(|(j, o)| j / o)
        ),
    );
    let p50 = median("ours", "p50_ms");
    let _ = writeln!(
        s,
        "Targets: tool-runtime ≥ 1.0× bare rmcp's throughput: {} ({}); ≥ 20× the Python SDK's: \
         {} ({}); p50 ≤ 5 ms under {} clients: {} ({} ms).\n",
        verdict(ratio("ours_over_rmcp").map(|r| r >= 1.0)),
        times(ratio("ours_over_rmcp")),
        verdict(ratio("ours_over_python").map(|r| r >= 20.0)),
        times(ratio("ours_over_python")),
        v["clients"].as_f64().unwrap_or(f64::NAN),
        verdict(p50.map(|p| p <= 5.0)),
        fixed(p50, 2),
    );
}

fn fixed(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.digits$}"),
        _ => "–".to_owned(),
    }
}

fn times(v: Option<f64>) -> String {
    fixed(v, 2)
        + if v.is_some_and(f64::is_finite) {
            "×"
        } else {
            ""
        }
}
