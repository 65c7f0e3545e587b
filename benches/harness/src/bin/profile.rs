//! A loop of calls for a profiler:
//! `profile <baseline|ours|ours-builder|rmcp|rig> <valid|invalid> <calls>`.
//!
//! and of runs for the run loop:
//! `profile runloop <tools> <calls per turn> <transcript length> <runs>`, and of direct
//! invokes of a run-loop tool: `profile ping <calls>`.
//!
//! ```text
//! valgrind --tool=callgrind target/release/profile ours valid 20000
//! valgrind --tool=callgrind --toggle-collect='*run_once*' target/release/profile runloop 1000 8 0 200
//! ```

use std::hint::black_box;

use tool_bench::{TOOL_NAME, args, baseline, block_on, ours};

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let which = argv.first().map_or("ours", String::as_str);
    if which == "runloop" {
        return runloop(&argv[1..]);
    }
    if which == "ping" {
        return ping(&argv[1..]);
    }
    let input = match argv.get(1).map_or("valid", String::as_str) {
        "invalid" => args::INVALID,
        _ => args::VALID,
    };
    let calls: usize = argv
        .get(2)
        .map_or(100_000, |n| n.parse().expect("a number"));
    // Only the framework measured is set up, so that a run of no call costs little.
    type Call = Box<dyn Fn(&str, &[u8]) -> String>;
    let call: Call = match which {
        "baseline" => Box::new(baseline::call),
        "ours" => {
            let c = ours::Caller::new();
            Box::new(move |n, a| block_on(c.call(n, a)))
        }
        "ours-builder" => {
            let c = ours::Caller::builder();
            Box::new(move |n, a| block_on(c.call(n, a)))
        }
        #[cfg(feature = "rmcp")]
        "rmcp" => {
            let c = tool_bench::mcp::Caller::new();
            Box::new(move |n, a| block_on(c.call(n, a)))
        }
        #[cfg(feature = "rig")]
        "rig" => {
            let c = tool_bench::rig::Caller::new();
            Box::new(move |n, a| block_on(c.call(n, a)))
        }
        other => panic!("unknown framework {other}"),
    };
    let mut bytes = 0;
    for _ in 0..calls {
        bytes += call(black_box(TOOL_NAME), black_box(input)).len();
    }
    println!("{which}: {calls} calls, {bytes} bytes of results");
}

fn runloop(argv: &[String]) {
    use tool_bench::runloop::{earlier_output, history, replay_agent, run_once, tools};
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
    // `output` as the fifth argument: continue an earlier run's output of `len` + 11
    // messages (`Input::from(output)`) rather than a hand-built history of `len`.
    let continued = argv.get(4).is_some_and(|a| a == "output");
    let earlier = history(len);
    let output = continued.then(|| earlier_output(&rt, &agent, len));
    let mut calls = 0;
    for _ in 0..runs {
        // The history is cloned, and the output dropped, outside `run_once`: count
        // instructions with `--toggle-collect='*run_once*'` to leave them out.
        let input = match &output {
            Some(output) => tool_runtime::Input::from(output.clone()),
            None => earlier.clone().into(),
        };
        let out = run_once(&rt, &agent, input);
        calls += out.calls.len();
    }
    println!("runloop: {runs} runs, {calls} calls");
}

/// `profile ping <calls>`: direct `Tool::invoke`s of a run-loop tool, outside any loop.
fn ping(argv: &[String]) {
    let calls: usize = argv.first().map_or(1000, |s| s.parse().expect("a number"));
    let set = tool_bench::runloop::tools(1);
    let ctx = tool_runtime::Context::new();
    let mut bytes = 0;
    for _ in 0..calls {
        bytes += ping_once(&set[0], &ctx).len();
    }
    println!("ping: {calls} calls, {bytes} bytes");
}

#[inline(never)]
fn ping_once(tool: &tool_runtime::Tool, ctx: &tool_runtime::Context) -> String {
    block_on(tool.invoke(ctx, tool_bench::runloop::PING_ARGS.as_bytes()))
        .text()
        .to_owned()
}
