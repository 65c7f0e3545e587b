//! Figure 2, run-loop overhead: `Agent::run` on a zero-latency model, with turns of 1, 8 and
//! 64 parallel calls to a handler that returns at once; how a run grows with the number of
//! tools registered (10, 100, 1,000, built with `Tool::builder` in a loop) and with the length
//! of the transcript it continues.
//!
//! Each run is: discovery, one model turn asking for k calls, the k calls, one model turn
//! answering. The run's output (its transcript and call records) is dropped outside the
//! measurement, as are a `ScriptedModel` agent and a history built for one run. `direct-invoke` is one `Tool::invoke` of the same tool outside any loop, so that
//! `report` can split a run into the calls' own work and the loop's. Times are the benchmark
//! thread's CPU time (see `common/cpu.rs`); the tokio runtime is current-thread, so a run's
//! work is all on that thread.

#[path = "common/cpu.rs"]
#[allow(dead_code)]
mod cpu;

use std::hint::black_box;

use cpu::ThreadCpu;
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tool_bench::block_on;
use tool_bench::runloop::{
    PING_ARGS, earlier_output, history, replay_agent, run_once, scripted_agent, tools,
};
use tool_runtime::Context;
use tool_runtime::Input;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn bench_runloop(c: &mut Criterion<ThreadCpu>) {
    let rt = runtime();

    // The calls' own work: one invoke of the same tool, outside any loop.
    let ten = tools(10);
    let ctx = Context::new();
    c.bench_function("runloop/direct-invoke", |b| {
        b.iter(|| block_on(ten[0].invoke(&ctx, black_box(PING_ARGS.as_bytes()))));
    });

    // Parallel calls per turn (10 tools; k = 0 is a run that only answers).
    let mut group = c.benchmark_group("runloop/parallel");
    for k in [0_usize, 1, 8, 64] {
        let agent = replay_agent(&ten, usize::from(k > 0), k);
        assert_eq!(run_once(&rt, &agent, Input::new()).calls.len(), k);
        group.throughput(Throughput::Elements(k.max(1) as u64));
        group.bench_with_input(BenchmarkId::from_parameter(k), &k, |b, _| {
            b.iter_with_large_drop(|| run_once(&rt, &agent, Input::new()));
        });
    }
    group.finish();

    // Tools registered (turns of 8 calls).
    let mut group = c.benchmark_group("runloop/tools");
    for n in [10_usize, 100, 1000] {
        let set = tools(n);
        let agent = replay_agent(&set, 1, 8);
        assert_eq!(run_once(&rt, &agent, Input::new()).calls.len(), 8);
        group.throughput(Throughput::Elements(8));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_with_large_drop(|| run_once(&rt, &agent, Input::new()));
        });
    }
    group.finish();

    // Transcript length: the run continues a conversation of this many messages (10 tools,
    // turns of 8 calls). Cloning the history is setup, outside the measurement.
    let mut group = c.benchmark_group("runloop/transcript");
    let agent = replay_agent(&ten, 1, 8);
    for len in [0_usize, 256, 4096] {
        let earlier = history(len);
        assert_eq!(run_once(&rt, &agent, earlier.clone().into()).calls.len(), 8);
        group.throughput(Throughput::Elements(8));
        group.bench_with_input(BenchmarkId::from_parameter(len), &len, |b, _| {
            b.iter_batched(
                || earlier.clone().into(),
                |h| run_once(&rt, &agent, h),
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();

    // The same, continuing the output of an earlier run (`Input::from(output)`): the run
    // checks only the messages added after what the earlier run wrote.
    let mut group = c.benchmark_group("runloop/continued");
    for len in [0_usize, 4096] {
        let earlier = earlier_output(&rt, &agent, len);
        assert_eq!(run_once(&rt, &agent, earlier.clone().into()).calls.len(), 8);
        group.throughput(Throughput::Elements(8));
        group.bench_with_input(BenchmarkId::from_parameter(len), &len, |b, _| {
            b.iter_batched(
                || Input::from(earlier.clone()),
                |h| run_once(&rt, &agent, h),
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();

    // Turns that grow the transcript within one run: 8 turns of 8 calls.
    let mut group = c.benchmark_group("runloop/turns");
    for turns in [1_usize, 8] {
        let agent = replay_agent(&ten, turns, 8);
        assert_eq!(run_once(&rt, &agent, Input::new()).calls.len(), 8 * turns);
        group.throughput(Throughput::Elements(8 * turns as u64));
        group.bench_with_input(BenchmarkId::from_parameter(turns), &turns, |b, _| {
            b.iter_with_large_drop(|| run_once(&rt, &agent, Input::new()));
        });
    }
    group.finish();

    // The same runs with tool-runtime's `ScriptedModel` (a fresh one per run, built outside
    // the measurement): it records each request, which costs the test model, not the loop.
    let mut group = c.benchmark_group("runloop/scripted");
    for k in [1_usize, 8, 64] {
        assert_eq!(
            run_once(&rt, &scripted_agent(&ten, k), Input::new())
                .calls
                .len(),
            k
        );
        group.throughput(Throughput::Elements(k as u64));
        group.bench_with_input(BenchmarkId::from_parameter(k), &k, |b, &k| {
            b.iter_batched(
                || scripted_agent(&ten, k),
                |agent| (run_once(&rt, &agent, Input::new()), agent),
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpu);
    targets = bench_runloop
}
criterion_main!(benches);
