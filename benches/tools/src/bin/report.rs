//! Prints the table of one run of `benches/run.sh` as Markdown: every figure as a ratio to the
//! baseline measured in the same run, with the absolute times beside it.
//!
//! ```text
//! report <benches/target>
//! ```
//!
//! Reads criterion's estimates (`criterion/**/new/{benchmark,estimates}.json`) and what the
//! script wrote under `bench-results/`: the interleaved call pass, the memory reports, the
//! compile timings and `meta.json`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

#[path = "report/durable.rs"]
mod durable;
#[path = "report/many_runs.rs"]
mod many_runs;
#[path = "report/mcp_load.rs"]
mod mcp_load;

fn main() {
    let target = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "target".to_owned()),
    );
    let r = Report::load(&target);
    let table = r.render();
    let argv: Vec<String> = std::env::args().collect();
    match argv.iter().position(|a| a == "--update") {
        Some(i) => {
            let path = argv.get(i + 1).expect("--update <RESULTS.md>");
            update(path, &table);
        }
        None => print!("{table}"),
    }
}

/// Replaces the table between the markers of `path` with `table`.
fn update(path: &str, table: &str) {
    const START: &str = "<!-- table:start -->";
    const END: &str = "<!-- table:end -->";
    let text = fs::read_to_string(path).expect("read RESULTS.md");
    let (head, rest) = text.split_once(START).expect("the start marker");
    let (_, tail) = rest.split_once(END).expect("the end marker");
    fs::write(path, format!("{head}{START}\n{table}{END}{tail}")).expect("write RESULTS.md");
}

struct Report {
    /// criterion full id → median ns per iteration.
    crit: BTreeMap<String, f64>,
    results: PathBuf,
}

impl Report {
    fn load(target: &Path) -> Self {
        let mut crit = BTreeMap::new();
        collect_criterion(&target.join("criterion"), &mut crit);
        Self {
            crit,
            results: target.join("bench-results"),
        }
    }

    fn json(&self, name: &str) -> Option<Value> {
        let text = fs::read_to_string(self.results.join(name)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The timed compile runs of `fw`: (wall s, CPU s if known), one per round.
    fn compile_runs(&self, fw: &str, kind: &str) -> Vec<(f64, Option<f64>)> {
        (1..)
            .map_while(|rep| self.json(&format!("compile/{fw}-{kind}-{rep}.json")))
            .filter_map(|v| {
                let r = &v["results"][0];
                let wall = r["times"][0].as_f64()?;
                let cpu = r["user"]
                    .as_f64()
                    .zip(r["system"].as_f64())
                    .map(|(u, s)| u + s);
                Some((wall, cpu))
            })
            .collect()
    }

    fn compile_median(&self, fw: &str, kind: &str, cpu: bool) -> Option<f64> {
        let v: Vec<f64> = self
            .compile_runs(fw, kind)
            .into_iter()
            .filter_map(|(wall, c)| if cpu { c } else { Some(wall) })
            .collect();
        (!v.is_empty()).then(|| median(v))
    }

    fn ns(&self, id: &str) -> Option<f64> {
        self.crit.get(id).copied()
    }

    fn render(&self) -> String {
        let mut s = String::new();
        self.meta(&mut s);
        self.calls(&mut s);
        self.runloop(&mut s);
        self.compile(&mut s);
        self.memory(&mut s);
        mcp_load::render(self.json("mcp-load.json").as_ref(), &mut s);
        self.many_runs(&mut s);
        durable::render(self.json("durable.json").as_ref(), &mut s);
        self.targets(&mut s);
        s
    }

    fn meta(&self, s: &mut String) {
        let Some(m) = self.json("meta.json") else {
            s.push_str("_(no meta.json: run benches/run.sh)_\n\n");
            return;
        };
        let get = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("?").to_owned();
        let _ = writeln!(
            s,
            "Run of {} on {} ({} cores, load average {} at the start), {}; the repository at `{}`; \
             rmcp {}, rig-core {} / rig-agent {}, schemars {}, serde_json {}; {}{}.\n",
            get("date"),
            get("cpu"),
            get("cores"),
            get("load"),
            get("rustc"),
            get("commit"),
            get("rmcp"),
            get("rig_core"),
            get("rig_agent"),
            get("schemars"),
            get("serde_json"),
            if get("quick") == "1" {
                "QUICK=1 (short run: indicative only)"
            } else {
                "full run"
            },
            match get("hyperfine").as_str() {
                "" | "?" => String::new(),
                h => format!(", compile times with {h}"),
            },
        );
        if let Some(secs) = self
            .json("elapsed.json")
            .and_then(|e| e["seconds"].as_u64())
        {
            let _ = writeln!(
                s,
                "The run took {} min {} s, builds included.\n",
                secs / 60,
                secs % 60
            );
        }
    }

    fn calls(&self, s: &mut String) {
        s.push_str("### 1. Call overhead: (tool name, argument bytes) → model-facing string\n\n");
        s.push_str(
            "Ratio to the hand-written baseline measured in the same run (lower is better). \
             *interleaved*: median of per-round ratios, every framework in each round \
             [p25–p75]; *criterion*: ratio of criterion's medians. ns: criterion's median.\n\n",
        );
        let inter = self.json("call-interleaved.json");
        let solo = self.json("solo-call-interleaved.json");
        s.push_str("| framework | valid: interleaved | valid: criterion | valid ns | invalid (3 violations): interleaved | invalid: criterion | invalid ns |\n");
        s.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
        let label = |w: &str| match w {
            "baseline" => "hand-written baseline (serde + checks by hand)",
            "ours" => "**tool-runtime** `#[tool]`, `Tool::invoke` (validation included)",
            "ours-builder" => "tool-runtime `Tool::builder` tool (closure handler), `Tool::invoke`",
            "rmcp" => "rmcp `ToolRouter::call` (limits not enforced)",
            "rig" => "rig `ToolSet::execute` (limits not enforced)",
            _ => "?",
        };
        for w in ["baseline", "ours", "ours-builder", "rmcp", "rig"] {
            let mut row = format!("| {} ", label(w));
            for case in ["valid", "invalid"] {
                let i = inter.as_ref().and_then(|v| v["cases"][case].get(w));
                row.push_str(&format!("| {} ", fmt_ratio_range(i)));
                let base = self.ns(&format!("call/{case}/baseline"));
                let mine = self.ns(&format!("call/{case}/{w}"));
                row.push_str(&format!(
                    "| {} | {} ",
                    ratio(mine, base),
                    mine.map_or("–".into(), |n| format!("{n:.0}"))
                ));
            }
            row.push_str("|\n");
            s.push_str(&row);
        }
        if solo.is_some() || self.ns("solo-call/valid/ours").is_some() {
            let mut row = String::from(
                "| tool-runtime, built without the peers (serde_json without rig's features) ",
            );
            for case in ["valid", "invalid"] {
                let i = solo.as_ref().and_then(|v| v["cases"][case].get("ours"));
                let base = self.ns(&format!("solo-call/{case}/baseline"));
                let mine = self.ns(&format!("solo-call/{case}/ours"));
                row.push_str(&format!(
                    "| {} | {} | {} ",
                    fmt_ratio_range(i),
                    ratio(mine, base),
                    mine.map_or("–".into(), |n| format!("{n:.0}"))
                ));
            }
            row.push_str("|\n");
            s.push_str(&row);
        }
        s.push('\n');
        if let Some(ins) = self.json("instructions.json") {
            let _ = writeln!(
                s,
                "Instructions per call (valgrind `--tool=callgrind`, {} calls less a run of none; \
                 the same build as above): a measure the machine's load cannot move.\n",
                ins["calls"]
            );
            s.push_str("| framework | valid: instructions | valid: ratio to baseline | invalid: instructions | invalid: ratio to baseline |\n|---|---:|---:|---:|---:|\n");
            for w in ["baseline", "ours", "ours-builder", "rmcp", "rig"] {
                let mut row = format!("| {} ", label(w));
                for case in ["valid", "invalid"] {
                    let n = ins["per_call"][format!("{w}/{case}")].as_f64();
                    let b = ins["per_call"][format!("baseline/{case}")].as_f64();
                    row.push_str(&format!("| {} | {} ", opt(n, 0), ratio(n, b)));
                }
                row.push_str("|\n");
                s.push_str(&row);
            }
            s.push('\n');
        }
    }

    fn runloop(&self, s: &mut String) {
        s.push_str("### 2. Run-loop overhead: `Agent::run` on a zero-latency model\n\n");
        let Some(invoke) = self.ns("runloop/direct-invoke") else {
            s.push_str("_(no run-loop results)_\n\n");
            return;
        };
        let ins = self.json("runloop-instructions.json");
        let ping = ins.as_ref().and_then(|v| v["ping"].as_f64());
        let _ = writeln!(
            s,
            "One run = discovery, a model turn asking for k parallel calls, the calls, a model \
             turn answering. The handler returns at once; one direct `Tool::invoke` of it costs \
             {invoke:.0} ns ({} instructions). *loop cost per call* = (run − run with no call) \
             / k − direct invoke, in ns (criterion, CPU time) and in instructions (callgrind, \
             inside `Agent::run` only); its ratio is to the direct invoke. *ratio to reference* \
             is in instructions where counted (the machine's load moves the ns), else in ns. \
             Model: `ReplayModel` (answers from the request, records nothing), except the \
             `ScriptedModel` rows.\n",
            opt(ping, 0)
        );
        let base = LoopBase {
            report: self,
            ins: ins.as_ref(),
            invoke,
            ping,
            base_run: self.ns("runloop/parallel/0"),
            base_ins: ins.as_ref().and_then(|v| v["per_run"]["10/0/0"].as_f64()),
        };
        s.push_str("| case | ns per run | instructions per run | calls/s | ns per call | loop cost per call: ns | loop cost per call: instructions | loop cost / direct invoke (instructions) | ratio to reference |\n");
        s.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        base.rows(s);
        s.push('\n');
    }

    fn compile(&self, s: &mut String) {
        s.push_str("### 3. Compile time: a crate of 100 tools (dev profile, dependencies already built)\n\n");
        if self.compile_runs("ours", "clean").is_empty() {
            s.push_str("_(no compile-time results)_\n\n");
            return;
        }
        let reps = self.compile_runs("ours", "clean").len();
        let _ = writeln!(
            s,
            "Median of {reps} round(s); the frameworks take turns in each round. *clean*: \
             `cargo clean -p <crate>`, then `cargo build`; *edit*: the body of one tool \
             changed, then `cargo build` (incremental). Wall time and CPU time (user + \
             system) in s; ratios of the medians of wall time. The baseline is hand-written serde \
             (inputs, checks by hand, a `match` on the name; no schema, no registry).\n"
        );
        s.push_str("| crate of 100 tools | clean: wall s | clean: CPU s | clean ratio to baseline | clean ratio to tool-runtime | edit: wall s | edit: CPU s | edit ratio to baseline | edit ratio to tool-runtime |\n");
        s.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        let med = |fw: &str, kind: &str, _key: &str| self.compile_median(fw, kind, false);
        let cpu = |fw: &str, kind: &str| self.compile_median(fw, kind, true);
        for (fw, label) in [
            ("baseline", "hand-written serde (baseline)"),
            ("ours", "**tool-runtime** (`#[derive(Schema)]` + `#[tool]`)"),
            ("rmcp", "rmcp + schemars (`#[tool_router]` + `#[tool]`)"),
            ("rig", "rig (`#[rig_tool]` + `ToolSet`)"),
        ] {
            let mut row = format!("| {label} ");
            for kind in ["clean", "edit"] {
                let wall = med(fw, kind, "wall");
                let cpu_s = cpu(fw, kind);
                let base = med("baseline", kind, "wall");
                let ours = med("ours", kind, "wall");
                row.push_str(&format!(
                    "| {} | {} | {} | {} ",
                    opt(wall, 2),
                    opt(cpu_s, 2),
                    ratio(wall, base),
                    ratio(wall, ours)
                ));
            }
            row.push_str("|\n");
            s.push_str(&row);
        }
        s.push('\n');
    }

    fn memory(&self, s: &mut String) {
        s.push_str("### 4. Memory\n\n");
        let per_tool = self.json("memory-per-tool.json");
        if let Some(p) = &per_tool {
            let _ = writeln!(
                s,
                "Heap bytes held per registered tool ({} tools with the ticket input, each under \
                 its own name with its own schema, in the framework's by-name registry; counting \
                 global allocator). tool-runtime's schema text alone is {} bytes.\n",
                p["tools"], p["ours_schema_text_bytes"]
            );
            s.push_str(
                "| registry | bytes per tool | ratio to tool-runtime `Agent` |\n|---|---:|---:|\n",
            );
            let ours = p["ours_agent"].as_f64();
            for (k, label) in [
                ("ours_tool", "tool-runtime `Tool` (`Tool::builder`), alone"),
                (
                    "ours_agent",
                    "**tool-runtime** `Agent` holding the tools (tools + specs + name map)",
                ),
                ("rmcp", "rmcp `ToolRouter`"),
                ("rig", "rig `ToolSet` (`DynamicTool`s)"),
            ] {
                let v = p[k].as_f64();
                let _ = writeln!(s, "| {label} | {} | {} |", opt(v, 0), ratio(v, ours));
            }
            s.push('\n');
        }
        let mut rows = Vec::new();
        for fw in ["baseline", "ours-invoke", "ours-agent", "rmcp", "rig"] {
            if let Some(v) = self.json(&format!("memory-run-{fw}.json")) {
                rows.push((fw, v));
            }
        }
        if rows.is_empty() {
            return;
        }
        s.push_str(
            "A run of 1,000 calls with the valid arguments, one process each; results kept (as \
             a transcript keeps them). Peak RSS is the process's `VmHWM` (the same binary for \
             every framework); heap peak is the most the run held at once above what was \
             allocated before it.\n\n",
        );
        s.push_str("| run of 1,000 calls | peak RSS (MiB) | peak RSS ratio to baseline | heap peak (KiB) | heap peak ratio to baseline | heap kept after (KiB) |\n|---|---:|---:|---:|---:|---:|\n");
        let base = rows
            .iter()
            .find(|(fw, _)| *fw == "baseline")
            .map(|(_, v)| v.clone());
        for (fw, v) in &rows {
            let label = match *fw {
                "baseline" => "hand-written baseline",
                "ours-invoke" => "tool-runtime, 1,000 × `Tool::invoke`",
                "ours-agent" => "**tool-runtime**, one `Agent::run`: 10 turns × 100 parallel calls",
                "rmcp" => "rmcp, 1,000 × `ToolRouter::call`",
                "rig" => "rig, 1,000 × `ToolSet::execute`",
                _ => "?",
            };
            let rss = v["peak_rss_bytes"].as_f64();
            let heap = v["heap_peak_over_start_bytes"].as_f64();
            let kept = v["heap_kept_bytes"].as_f64();
            let b_rss = base.as_ref().and_then(|b| b["peak_rss_bytes"].as_f64());
            let b_heap = base
                .as_ref()
                .and_then(|b| b["heap_peak_over_start_bytes"].as_f64());
            let _ = writeln!(
                s,
                "| {label} | {} | {} | {} | {} | {} |",
                opt(rss.map(|b| b / 1_048_576.0), 1),
                ratio(rss, b_rss),
                opt(heap.map(|b| b / 1024.0), 0),
                ratio(heap, b_heap),
                opt(kept.map(|b| b / 1024.0), 0),
            );
        }
        s.push('\n');
    }

    fn targets(&self, s: &mut String) {
        s.push_str("### Targets\n\n");
        let inter = self.json("call-interleaved.json");
        let r = |w: &str| {
            inter
                .as_ref()
                .and_then(|v| v["cases"]["valid"][w]["median_ratio_to_baseline"].as_f64())
        };
        let ins = self.json("instructions.json");
        let ir = |w: &str| {
            let per = |c: &str| ins.as_ref().and_then(|v| v["per_call"][c].as_f64());
            per(&format!("{w}/valid"))
                .zip(per("baseline/valid"))
                .map(|(a, b)| a / b)
        };
        let ours = r("ours");
        let _ = writeln!(
            s,
            "- Call overhead within 1.3× the hand-written baseline in instructions: {} ({}).",
            verdict(ir("ours").map(|o| o <= 1.3)),
            times(ir("ours"))
        );
        let _ = writeln!(
            s,
            "- Call overhead within 1.5× the hand-written baseline in CPU time: {} ({}, \
             interleaved).",
            verdict(ours.map(|o| o <= 1.5)),
            times(ours)
        );
        self.compile_targets(s);
        let loop_ins = self.json("runloop-instructions.json");
        let run = |key: &str| loop_ins.as_ref().and_then(|v| v["per_run"][key].as_f64());
        let ping = loop_ins.as_ref().and_then(|v| v["ping"].as_f64());
        let per_call = run("10/8/0")
            .zip(run("10/0/0"))
            .zip(ping)
            .map(|((with, without), ping)| ((with - without) / 8.0 - ping) / ping);
        let _ = writeln!(
            s,
            "- Run-loop cost per call within 2.5× a direct `Tool::invoke` (8 parallel calls, \
             instructions): {} ({}).",
            verdict(per_call.map(|r| r <= 2.5)),
            times(per_call)
        );
        let against = |a: &str, b: &str| run(a).zip(run(b)).map(|(a, b)| a / b);
        let tools = against("1000/8/0", "10/8/0");
        let _ = writeln!(
            s,
            "- A run with 1,000 tools within 1.2× a run with 10 (instructions): {} ({}).",
            verdict(tools.map(|r| r <= 1.2)),
            times(tools)
        );
        let continued = against("10/8/4096/output", "10/8/0/output");
        let built = against("10/8/4096", "10/8/0");
        let _ = writeln!(
            s,
            "- Continuing a conversation of 4,096 messages within 1.2× an empty one \
             (instructions): {} when it is an earlier run's output ({}); {} when it is a \
             hand-built transcript, checked whole ({}).",
            verdict(continued.map(|r| r <= 1.2)),
            times(continued),
            verdict(built.map(|r| r <= 1.2)),
            times(built)
        );
        for peer in ["rmcp", "rig"] {
            let p = r(peer);
            let _ = writeln!(
                s,
                "- Call faster than {peer}: {} (tool-runtime {} vs {peer} {} the baseline in \
                 CPU time; {} vs {} in instructions).",
                verdict(ours.zip(p).map(|(o, p)| o < p)),
                times(ours),
                times(p),
                times(ir("ours")),
                times(ir(peer))
            );
        }
        self.compile_against_peers(s);
        s.push('\n');
    }

    /// The compile-time targets: clean and after an edit, against the floor.
    fn compile_targets(&self, s: &mut String) {
        let (clean, floor) = (
            self.compile_median("ours", "clean", false),
            self.compile_median("baseline", "clean", false),
        );
        if clean.is_some() {
            let tools = self
                .json("meta.json")
                .and_then(|m| m["tools"].as_str().map(str::to_owned))
                .unwrap_or_else(|| "100".to_owned());
            let ratio = clean.zip(floor).map(|(o, b)| o / b);
            let _ = writeln!(
                s,
                "- Clean build of {tools} tools within 1.2× the hand-written floor: {} ({}).",
                verdict(ratio.map(|r| r <= 1.2)),
                times(ratio)
            );
            let edit = self
                .compile_median("ours", "edit", false)
                .zip(self.compile_median("baseline", "edit", false))
                .map(|(o, b)| o / b);
            let _ = writeln!(
                s,
                "- Build of {tools} tools after editing one within 1.15× the hand-written floor: \
                 {} ({}).",
                verdict(edit.map(|r| r <= 1.15)),
                times(edit)
            );
        }
    }

    /// Compile time (clean and after an edit) against rmcp and rig.
    fn compile_against_peers(&self, s: &mut String) {
        for kind in ["clean", "edit"] {
            for peer in ["rmcp", "rig"] {
                let (o, p) = (
                    self.compile_median("ours", kind, false),
                    self.compile_median(peer, kind, false),
                );
                if o.is_none() {
                    continue;
                }
                let _ = writeln!(
                    s,
                    "- Compile time ({kind}) faster than {peer}: {} ({} s vs {} s).",
                    verdict(o.zip(p).map(|(o, p)| o < p)),
                    opt(o, 2),
                    opt(p, 2)
                );
            }
        }
    }
}

/// What the rows of table 2 are measured against: the direct invoke, the run with no call.
struct LoopBase<'a> {
    report: &'a Report,
    ins: Option<&'a Value>,
    invoke: f64,
    ping: Option<f64>,
    base_run: Option<f64>,
    base_ins: Option<f64>,
}

impl LoopBase<'_> {
    fn ins_of(&self, key: &str) -> Option<f64> {
        self.ins.and_then(|v| v["per_run"][key].as_f64())
    }

    /// The rows of table 2, in order.
    fn rows(&self, s: &mut String) {
        self.row(
            s,
            "run with no call (answer only), 10 tools".into(),
            "runloop/parallel/0",
            Some("10/0/0"),
            0,
            None,
        );
        for k in [1_usize, 8, 64] {
            self.row(
                s,
                format!("1 turn of {k} parallel call(s), 10 tools"),
                &format!("runloop/parallel/{k}"),
                Some(&format!("10/{k}/0")),
                k,
                None,
            );
        }
        for n in [10_usize, 100, 1000] {
            self.row(
                s,
                format!("8 calls, {n} tools registered"),
                &format!("runloop/tools/{n}"),
                Some(&format!("{n}/8/0")),
                8,
                Some(("10 tools", Some("10/8/0"), "runloop/tools/10")),
            );
        }
        for len in [0_usize, 256, 4096] {
            self.row(
                s,
                format!("8 calls, continuing a transcript of {len} messages"),
                &format!("runloop/transcript/{len}"),
                Some(&format!("10/8/{len}")),
                8,
                Some(("empty transcript", Some("10/8/0"), "runloop/transcript/0")),
            );
        }
        for len in [0_usize, 4096] {
            self.row(
            s,
                format!(
                    "8 calls, continuing an earlier run's output of {} messages (`Input::from(output)`)",
                    len + 11
                ),
                &format!("runloop/continued/{len}"),
                Some(&format!("10/8/{len}/output")),
                8,
                Some((
                    "an earlier run's output of 11",
                    Some("10/8/0/output"),
                    "runloop/continued/0",
                )),
            );
        }
        for turns in [1_usize, 8] {
            self.row(
                s,
                format!("{turns} turn(s) of 8 calls (transcript grows in the run)"),
                &format!("runloop/turns/{turns}"),
                None,
                8 * turns,
                None,
            );
        }
        for k in [1_usize, 8, 64] {
            self.row(
                s,
                format!("`ScriptedModel`, 1 turn of {k} call(s)"),
                &format!("runloop/scripted/{k}"),
                None,
                k,
                Some(("`ReplayModel`", None, &format!("runloop/parallel/{k}"))),
            );
        }
    }

    /// One row: `k` calls per run (0: the run with no call), its instructions under `ikey`,
    /// and its ratio to a `reference` (what, its instructions' key, its criterion id).
    fn row(
        &self,
        s: &mut String,
        name: String,
        id: &str,
        ikey: Option<&str>,
        k: usize,
        reference: Option<(&str, Option<&str>, &str)>,
    ) {
        let Some(run) = self.report.ns(id) else {
            return;
        };
        let run_ins = ikey.and_then(|k| self.ins_of(k));
        let per_call = if k > 0 { run / k as f64 } else { f64::NAN };
        let loop_ns = match (k, self.base_run) {
            (0, _) | (_, None) => f64::NAN,
            (_, Some(b)) => (run - b) / k as f64 - self.invoke,
        };
        let loop_ins = match (k, run_ins, self.base_ins, self.ping) {
            (k, Some(r), Some(b), Some(p)) if k > 0 => Some((r - b) / k as f64 - p),
            _ => None,
        };
        let calls_s = if k > 0 { 1e9 / per_call } else { f64::NAN };
        let reference = reference.map_or("–".to_owned(), |(what, ref_ikey, ref_id)| {
            match (run_ins, ref_ikey.and_then(|k| self.ins_of(k))) {
                (Some(a), Some(b)) => format!("{:.2}× {what}", a / b),
                _ => match self.report.ns(ref_id) {
                    Some(b) => format!("{:.2}× {what} (ns)", run / b),
                    None => "–".to_owned(),
                },
            }
        });
        let _ = writeln!(
            s,
            "| {name} | {run:.0} | {} | {} | {} | {} | {} | {} | {reference} |",
            opt(run_ins, 0),
            num(calls_s, 0),
            num(per_call, 0),
            num(loop_ns, 0),
            opt(loop_ins, 0),
            loop_ins
                .zip(self.ping)
                .map_or("–".to_owned(), |(l, p)| format!("{:.2}×", l / p)),
        );
    }
}

/// A target's verdict: met, missed, or not measured.
fn verdict(ok: Option<bool>) -> &'static str {
    match ok {
        Some(true) => "**met**",
        Some(false) => "**missed**",
        None => "not measured",
    }
}

fn collect_criterion(dir: &Path, out: &mut BTreeMap<String, f64>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        if path.file_name().is_some_and(|n| n == "new") {
            let bench = fs::read_to_string(path.join("benchmark.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok());
            let est = fs::read_to_string(path.join("estimates.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok());
            if let (Some(b), Some(e)) = (bench, est) {
                let id = b["full_id"].as_str().unwrap_or_default().to_owned();
                if let Some(m) = e["median"]["point_estimate"].as_f64() {
                    out.insert(id, m);
                }
            }
        } else {
            collect_criterion(&path, out);
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => "–".to_owned(),
    }
}

fn fmt_ratio_range(v: Option<&Value>) -> String {
    let Some(v) = v else { return "–".to_owned() };
    match (
        v["median_ratio_to_baseline"].as_f64(),
        v["p25_ratio"].as_f64(),
        v["p75_ratio"].as_f64(),
    ) {
        (Some(m), Some(lo), Some(hi)) => format!("{m:.2}× [{lo:.2}–{hi:.2}]"),
        _ => "–".to_owned(),
    }
}

fn times(v: Option<f64>) -> String {
    v.map_or("–".to_owned(), |x| format!("{x:.2}×"))
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".to_owned(), |x| num(x, digits))
}

fn num(x: f64, digits: usize) -> String {
    if x.is_nan() {
        "–".to_owned()
    } else {
        format!("{x:.digits$}")
    }
}
