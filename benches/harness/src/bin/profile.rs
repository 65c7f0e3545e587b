//! A loop of calls for a profiler:
//! `profile <baseline|ours|ours-builder|rmcp|rig> <valid|invalid> <calls>`.
//!
//! and of runs for the run loop:
//! `profile runloop <tools> <calls per turn> <transcript length> <runs>`.
//!
//! ```text
//! valgrind --tool=callgrind target/release/profile ours valid 20000
//! valgrind --tool=callgrind target/release/profile runloop 1000 8 0 200
//! ```

use std::hint::black_box;

use tool_bench::{TOOL_NAME, args, baseline, block_on, ours};

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let which = argv.first().map_or("ours", String::as_str);
    if which == "runloop" {
        return runloop(&argv[1..]);
    }
    let input = match argv.get(1).map_or("valid", String::as_str) {
        "invalid" => args::INVALID,
        _ => args::VALID,
    };
    let calls: usize = argv
        .get(2)
        .map_or(100_000, |n| n.parse().expect("a number"));
    let ours = ours::Caller::new();
    let ours_builder = ours::Caller::builder();
    #[cfg(feature = "rmcp")]
    let rmcp = tool_bench::mcp::Caller::new();
    #[cfg(feature = "rig")]
    let rig = tool_bench::rig::Caller::new();
    let mut bytes = 0;
    for _ in 0..calls {
        let out = match which {
            "baseline" => baseline::call(black_box(TOOL_NAME), black_box(input)),
            "ours" => block_on(ours.call(black_box(TOOL_NAME), black_box(input))),
            "ours-builder" => block_on(ours_builder.call(black_box(TOOL_NAME), black_box(input))),
            #[cfg(feature = "rmcp")]
            "rmcp" => block_on(rmcp.call(black_box(TOOL_NAME), black_box(input))),
            #[cfg(feature = "rig")]
            "rig" => block_on(rig.call(black_box(TOOL_NAME), black_box(input))),
            other => panic!("unknown framework {other}"),
        };
        bytes += out.len();
    }
    println!("{which}: {calls} calls, {bytes} bytes of results");
}

fn runloop(argv: &[String]) {
    use tool_bench::runloop::{history, replay_agent, run_once, tools};
    let arg = |i: usize, default: usize| {
        argv.get(i)
            .map_or(default, |s| s.parse().expect("a number"))
    };
    let (n, k, len, runs) = (arg(0, 10), arg(1, 8), arg(2, 0), arg(3, 1000));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let set = tools(n);
    let agent = replay_agent(&set, usize::from(k > 0), k);
    let earlier = history(len);
    let mut calls = 0;
    for _ in 0..runs {
        calls += run_once(&rt, &agent, earlier.clone()).calls.len();
    }
    println!("runloop: {runs} runs, {calls} calls");
}
