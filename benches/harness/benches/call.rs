//! Figure 1, call overhead: from (tool name, argument bytes) to the model-facing string, for
//! valid arguments and for arguments with three violations.
//!
//! Times are the benchmark thread's CPU time (see `common/cpu.rs`). Criterion measures each
//! framework in turn. Because the machine is shared, the same binary then runs an interleaved
//! pass (every framework in each round, rounds repeated) and keeps the median of the
//! per-round ratios to the baseline; `report` prints both.
//!
//! Built without the default features (`--no-default-features`) it measures only
//! tool-runtime and the baseline, under the serde_json features tool-runtime alone gets; the
//! benchmark ids then start with `solo-`.

#[path = "common/cpu.rs"]
mod cpu;

use std::hint::black_box;
use std::time::Instant;

use cpu::{ThreadCpu, thread_cpu_ns};
use criterion::{Criterion, criterion_group};
use tool_bench::{TOOL_NAME, args, baseline, block_on, ours};

const PREFIX: &str = if cfg!(any(feature = "rmcp", feature = "rig")) {
    "call"
} else {
    "solo-call"
};

/// Every framework's call, behind one signature.
struct Frameworks {
    ours: ours::Caller,
    ours_builder: ours::Caller,
    #[cfg(feature = "rmcp")]
    rmcp: tool_bench::mcp::Caller,
    #[cfg(feature = "rig")]
    rig: tool_bench::rig::Caller,
}

impl Frameworks {
    fn new() -> Self {
        Self {
            ours: ours::Caller::new(),
            ours_builder: ours::Caller::builder(),
            #[cfg(feature = "rmcp")]
            rmcp: tool_bench::mcp::Caller::new(),
            #[cfg(feature = "rig")]
            rig: tool_bench::rig::Caller::new(),
        }
    }

    fn names(&self) -> Vec<&'static str> {
        let mut names = vec!["baseline", "ours", "ours-builder"];
        if cfg!(feature = "rmcp") {
            names.push("rmcp");
        }
        if cfg!(feature = "rig") {
            names.push("rig");
        }
        names
    }

    fn call(&self, which: &str, name: &str, args: &[u8]) -> String {
        match which {
            "baseline" => baseline::call(name, args),
            "ours" => block_on(self.ours.call(name, args)),
            "ours-builder" => block_on(self.ours_builder.call(name, args)),
            #[cfg(feature = "rmcp")]
            "rmcp" => block_on(self.rmcp.call(name, args)),
            #[cfg(feature = "rig")]
            "rig" => block_on(self.rig.call(name, args)),
            other => panic!("no framework {other}"),
        }
    }
}

/// Checks that every framework gives the model the same result for the valid arguments and an
/// error for the invalid ones, and shows what each says.
fn check(fw: &Frameworks) {
    let expected = tool_bench::shared::expected_valid();
    for which in fw.names() {
        let valid = fw.call(which, TOOL_NAME, args::VALID);
        let parsed: serde_json::Value = serde_json::from_str(&valid)
            .unwrap_or_else(|e| panic!("{which}: not JSON ({e}): {valid}"));
        assert_eq!(parsed, expected, "{which}: {valid}");
        let invalid = fw.call(which, TOOL_NAME, args::INVALID);
        assert!(
            invalid.contains("urgent") || invalid.contains("enum") || invalid.contains("variant"),
            "{which} accepted invalid arguments: {invalid}"
        );
        eprintln!("[check] {which:8} valid   -> {valid}");
        eprintln!(
            "[check] {which:8} invalid -> {}",
            invalid.replace('\n', "\\n")
        );
    }
}

fn bench_calls(c: &mut Criterion<ThreadCpu>) {
    let fw = Frameworks::new();
    check(&fw);
    for (case, input) in [("valid", args::VALID), ("invalid", args::INVALID)] {
        let mut group = c.benchmark_group(format!("{PREFIX}/{case}"));
        for which in fw.names() {
            group.bench_function(which, |b| {
                b.iter(|| fw.call(which, black_box(TOOL_NAME), black_box(input)));
            });
        }
        group.finish();
    }
}

/// The interleaved pass: `rounds` rounds; in each, every framework runs `batch` calls (in a
/// rotating order). Writes, per case and framework, the median ns per call and the median of
/// the per-round ratios to the baseline.
fn interleaved(rounds: usize, batch: usize) {
    let fw = Frameworks::new();
    let names = fw.names();
    let mut out = serde_json::Map::new();
    for (case, input) in [("valid", args::VALID), ("invalid", args::INVALID)] {
        let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); names.len()];
        let mut wall: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); names.len()];
        for round in 0..rounds {
            for step in 0..names.len() {
                let i = (round + step) % names.len();
                let which = names[i];
                let (start, cpu_start) = (Instant::now(), thread_cpu_ns());
                for _ in 0..batch {
                    black_box(fw.call(which, black_box(TOOL_NAME), black_box(input)));
                }
                times[i].push((thread_cpu_ns() - cpu_start) as f64 / batch as f64);
                wall[i].push(start.elapsed().as_nanos() as f64 / batch as f64);
            }
        }
        let mut case_out = serde_json::Map::new();
        for (i, which) in names.iter().enumerate() {
            let ratios: Vec<f64> = times[i]
                .iter()
                .zip(&times[0])
                .map(|(t, base)| t / base)
                .collect();
            case_out.insert(
                (*which).to_owned(),
                serde_json::json!({
                    "median_ns": median(times[i].clone()),
                    "median_wall_ns": median(wall[i].clone()),
                    "median_ratio_to_baseline": median(ratios.clone()),
                    "p25_ratio": quantile(ratios.clone(), 0.25),
                    "p75_ratio": quantile(ratios, 0.75),
                }),
            );
        }
        out.insert(case.to_owned(), serde_json::Value::Object(case_out));
    }
    let doc = serde_json::json!({"rounds": rounds, "batch": batch, "cases": out});
    let dir = results_dir();
    let path = dir.join(format!("{PREFIX}-interleaved.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&doc).expect("json"))
        .expect("write the interleaved results");
    eprintln!("[interleaved] wrote {}", path.display());
}

fn median(v: Vec<f64>) -> f64 {
    quantile(v, 0.5)
}

fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let pos = q * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

fn results_dir() -> std::path::PathBuf {
    let dir = std::env::var_os("BENCH_RESULTS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from("target/bench-results"));
    std::fs::create_dir_all(&dir).expect("create the results directory");
    dir
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpu);
    targets = bench_calls
}

fn main() {
    benches();
    Criterion::default()
        .with_measurement(ThreadCpu)
        .configure_from_args()
        .final_summary();
    // `cargo bench -- <filter>` and `--list` pass arguments; run the interleaved pass only on
    // a full run.
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let quick = std::env::var_os("QUICK").is_some_and(|v| v == "1");
    // Short batches, many rounds: the median of per-round ratios shrugs off a busy neighbour.
    let (rounds, batch) = if quick { (201, 200) } else { (1001, 400) };
    let started = Instant::now();
    interleaved(rounds, batch);
    eprintln!(
        "[interleaved] {rounds} rounds of {batch} calls in {:.1?}",
        started.elapsed()
    );
}
