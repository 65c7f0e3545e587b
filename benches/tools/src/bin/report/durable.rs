//! Section 7 of the table: a durable step (`bench-results/durable.json`, written by
//! `benches/durable`'s `durable-bench`), beside a bare `ctx.run` of Restate's SDK.

use std::fmt::Write as _;

use serde_json::Value;

/// Appends section 7 to `s`, if the run measured it.
pub fn render(durable: Option<&Value>, s: &mut String) {
    let Some(v) = durable else {
        return;
    };
    let num = |k: &str| v[k].as_f64();
    let fixed = |x: Option<f64>, digits: usize| {
        x.map_or_else(|| "–".to_owned(), |x| format!("{x:.digits$}"))
    };
    s.push_str("### 7. A durable step\n\n");
    let _ = writeln!(
        s,
        "tool-durable's `AgentRun` on a Restate server (127.0.0.1): a run whose model asks for {} \
         calls of a no-op tool in one turn, then answers ({} journaled steps and the run's state \
         writes), beside a workflow of Restate's SDK taking as many bare `ctx.run` steps on the \
         same server and worker; the two in turn, {} runs each; medians of a run's wall time \
         through the ingress. The same agent's run in one process, with no journal, is timed in \
         the same loop.\n",
        fixed(num("calls_per_run"), 0),
        fixed(num("steps_per_run"), 0),
        fixed(num("runs"), 0),
    );
    s.push_str(
        "| | ms per run | µs per step | ratio to a bare `ctx.run` |\n|---|---:|---:|---:|\n",
    );
    let ms = |k: &str| num(k).map(|us| us / 1000.0);
    let _ = writeln!(
        s,
        "| bare `ctx.run` (Restate's SDK) | {} | {} | 1.00× |",
        fixed(ms("bare_ctx_run_us_per_run"), 2),
        fixed(num("bare_us_per_step"), 0),
    );
    let _ = writeln!(
        s,
        "| **tool-durable** `AgentRun` | {} | {} | {}× |",
        fixed(ms("durable_agent_us_per_run"), 2),
        fixed(num("durable_us_per_step"), 0),
        fixed(num("durable_over_bare"), 2),
    );
    let _ = writeln!(
        s,
        "| the same run in one process, no journal | {} | | |\n",
        fixed(ms("in_process_agent_us_per_run"), 2),
    );
    let _ = writeln!(
        s,
        "The agent's own work is {} % of a durable run's time; the rest is Restate's round trip \
         per step.\n",
        fixed(num("journal_share").map(|share| (1.0 - share) * 100.0), 1),
    );
}
