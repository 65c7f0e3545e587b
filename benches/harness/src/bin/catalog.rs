//! Q2, catalogs of many tools: `catalog <deferred|plain> <tools> <calls> <runs> [rare|common|none]`
//! runs `runs` runs of an agent over `tools` tools: with `deferred`, each run searches for one
//! group of five (by its rare word alone, or with the words every tool shares) and then makes
//! `calls` calls of the tools it loaded; with `plain`, the tools are advertised from the start
//! and the run makes the calls at once. Prints the most tools a request carried and the heap
//! bytes a run held at most beyond what was held before it.
//!
//! ```text
//! valgrind --tool=callgrind --toggle-collect='*run_once*' target/release/catalog deferred 10000 8 200 rare
//! valgrind --tool=callgrind --toggle-collect='tool_runtime::agent::catalog::search' target/release/catalog deferred 10000 0 200 common
//! ```

use tool_bench::catalog::{CatalogModel, GROUP, agent, tools};
use tool_bench::counting::{Counting, held, peak, reset_peak};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: usize| {
        argv.get(i)
            .map_or(default, |s| s.parse().expect("a number"))
    };
    let deferred = argv.first().is_none_or(|mode| mode == "deferred");
    let (count, calls, runs) = (number(1, 10_000), number(2, 8), number(3, 100));
    let search = match argv.get(4).map_or("rare", String::as_str) {
        _ if !deferred => None,
        "none" => None,
        "common" => Some((count / GROUP / 2, false)),
        _ => Some((count / GROUP / 2, true)),
    };
    let set = tools(count, deferred);
    let (agent, most_tools) = agent(&set, CatalogModel::new(search, calls));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut held_by_run = 0;
    let mut made = 0;
    for _ in 0..runs {
        let before = held();
        reset_peak();
        let out = run_once(&rt, &agent);
        held_by_run = held_by_run.max(peak().saturating_sub(before));
        made += out.calls.len();
    }
    println!(
        "catalog: {} tools ({}), {runs} runs, {made} calls, most tools in a request: {}, \
         heap a run held at most: {held_by_run} bytes",
        count,
        if deferred { "deferred" } else { "plain" },
        most_tools.load(std::sync::atomic::Ordering::Relaxed),
    );
}

/// One run to its answer. (Never inlined, so that a profiler can count what it runs alone.)
#[inline(never)]
fn run_once(rt: &tokio::runtime::Runtime, agent: &tool_runtime::Agent) -> tool_runtime::RunOutput {
    let out = rt
        .block_on(agent.run(&tool_runtime::Context::new(), "go"))
        .expect("the run answers");
    assert_eq!(out.text, "done");
    out
}
