//! Section 6 of the table: many runs at once (`bench-results/many-runs.json`, written by
//! `harness/src/bin/many_runs.rs`).

use std::fmt::Write as _;

use serde_json::Value;

use super::{Report, opt};

impl Report {
    pub(crate) fn many_runs(&self, s: &mut String) {
        s.push_str("### 6. Many runs at once\n\n");
        let Some(v) = self.json("many-runs.json") else {
            s.push_str("_(no many-runs results)_\n\n");
            return;
        };
        let b = &v["baseline"];
        let t = &v["throughput"];
        let runs = v["runs"].as_u64().unwrap_or(0);
        let _ = writeln!(
            s,
            "{runs} runs of one agent started together on one tokio runtime (current-thread \
             unless said), each with its own context: two tools, and `ReplayModel` asking for \
             a call of each in one turn, then answering. Heap from a counting global \
             allocator; times are medians of {} rounds; ratios are to baselines measured in \
             the same process: one finished run's transcript ({} messages: {} bytes of heap, \
             {} of JSON), a paused run's transcript ({} messages: {} bytes, {} of JSON), and \
             the two tools invoked directly (`Tool::invoke`, no run). A run's future alone is \
             {} bytes.\n",
            v["rounds"],
            b["transcript_messages"],
            b["transcript_heap_bytes"],
            b["transcript_json_bytes"],
            b["paused_transcript_messages"],
            b["paused_transcript_heap_bytes"],
            b["paused_transcript_json_bytes"],
            b["run_future_bytes"],
        );
        let f = |x: &Value| x.as_f64();
        let transcript = f(&b["transcript_heap_bytes"]);
        let paused_transcript = f(&b["paused_transcript_heap_bytes"]);
        let paused_json = f(&b["paused_transcript_json_bytes"]);
        let per = |x: f64, base: Option<f64>, what: &str| match base {
            Some(b) if b > 0.0 => format!("{:.2}× {what}", x / b),
            _ => "–".to_owned(),
        };
        s.push_str("| held, per run | bytes | ratio |\n|---|---:|---:|\n");
        let i = &v["in_flight"];
        let p = &v["paused"];
        let rows: [(&str, Option<f64>, Option<f64>, &str); 5] = [
            (
                "a run in flight, parked in a call (heap)",
                f(&i["heap_bytes_per_run"]),
                transcript,
                "a finished run's transcript",
            ),
            (
                "the same at its peak while the runs were starting (heap)",
                f(&i["heap_peak_bytes_per_run"]),
                transcript,
                "a finished run's transcript",
            ),
            (
                "a paused run kept in memory (`PausedRun`: heap, and its 192-byte value)",
                f(&p["heap_bytes_per_run"]),
                paused_transcript,
                "its transcript",
            ),
            (
                "a paused run as `PausedRun::to_json` (pretty JSON)",
                f(&p["to_json_bytes_per_run"]),
                paused_json,
                "its transcript's JSON",
            ),
            (
                "a paused run as compact JSON",
                f(&p["compact_json_bytes_per_run"]),
                paused_json,
                "its transcript's JSON",
            ),
        ];
        for (label, bytes, base, what) in rows {
            let ratio = bytes.map_or("–".to_owned(), |x| per(x, base, what));
            let _ = writeln!(s, "| {label} | {} | {ratio} |", opt(bytes, 0));
        }
        let mib = |x: &Value| x.as_f64().map(|b| b / 1_048_576.0);
        let rss_growth = f(&i["rss_parked_bytes"])
            .zip(f(&i["rss_before_bytes"]))
            .map(|(a, b)| (a - b) / runs.max(1) as f64);
        let _ = writeln!(
            s,
            "\nProcess RSS with every run in flight: {} MiB (from {} MiB before them; {} bytes \
             per run); peak RSS (`VmHWM`) then {} MiB, and {} MiB at the end of the process.\n",
            opt(mib(&i["rss_parked_bytes"]), 1),
            opt(mib(&i["rss_before_bytes"]), 1),
            opt(rss_growth, 0),
            opt(mib(&i["peak_rss_bytes"]), 1),
            opt(mib(&v["peak_rss_bytes_at_end"]), 1),
        );
        s.push_str(
            "| runs started together | runs/s (wall) | runs/s (CPU) | CPU µs per run | ratio in CPU time (median of rounds [p25–p75]) |\n|---|---:|---:|---:|---:|\n",
        );
        let r = &t["ratios"];
        let ratio = |key: &str, what: &str| {
            let x = &r[key];
            match (f(&x["median"]), f(&x["p25"]), f(&x["p75"])) {
                (Some(m), Some(lo), Some(hi)) => format!("{m:.2}× [{lo:.2}–{hi:.2}] {what}"),
                _ => "–".to_owned(),
            }
        };
        let rows: [(&str, &str, String); 6] = [
            (
                "the two tools invoked directly, no run (`Tool::invoke` × 2)",
                "direct_invoke_pair",
                "1.00×".to_owned(),
            ),
            (
                "runs one after another (reference: no run waits for another)",
                "sequential",
                ratio("sequential_cpu_to_direct_invoke", "direct invokes"),
            ),
            (
                "**runs started together**",
                "together",
                format!(
                    "{}; {}",
                    ratio("together_cpu_to_direct_invoke", "direct invokes"),
                    ratio("together_cpu_to_sequential", "one after another")
                ),
            ),
            (
                "started together, multi-thread runtime of 2 workers (process CPU)",
                "together_multi_thread_2",
                format!(
                    "{}; wall time {}",
                    ratio("multi_thread_2_cpu_to_together", "current-thread"),
                    ratio("multi_thread_2_wall_to_together", "")
                ),
            ),
            (
                "runs that pause for approval, to their `PausedRun`",
                "pause_together",
                ratio("pause_cpu_to_together", "a run to its answer"),
            ),
            (
                "the paused runs resumed with an approval, to their answer",
                "resume_together",
                ratio("resume_cpu_to_together", "a run to its answer"),
            ),
        ];
        for (label, key, ratio) in rows {
            let x = &t[key];
            let _ = writeln!(
                s,
                "| {label} | {} | {} | {} | {} |",
                opt(f(&x["runs_per_s_wall"]), 0),
                opt(f(&x["runs_per_s_cpu"]), 0),
                opt(f(&x["cpu_ns_per_run"]).map(|n| n / 1e3), 2),
                ratio.trim_end(),
            );
        }
        s.push('\n');
    }
}
