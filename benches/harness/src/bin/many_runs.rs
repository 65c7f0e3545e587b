//! Figure 6, many runs at once: `RUNS` runs (10,000; `QUICK=1`: 1,000) of one agent started
//! together on one tokio runtime. The agent holds two tools and a zero-latency model
//! ([`ReplayModel`], which answers from the request and records nothing): each run is one
//! model turn asking for a call of each tool, the two calls, and a turn answering `done`.
//!
//! - *In flight*: every run started and parked inside a call (the second tool awaits a shared
//!   gate, a `watch` channel, and counts itself parked): the heap held at that moment less
//!   the heap before, per run; the process's peak RSS (`VmHWM`) beside it.
//! - *Throughput*: in each of `ROUNDS` rounds (5; `QUICK=1`: 3), on the current-thread
//!   runtime, so that the thread's CPU time is the runs' CPU time: the two tools invoked
//!   directly (`Tool::invoke`) `RUNS` times (the calls' own work), `RUNS` runs one after the
//!   other, `RUNS` runs started together, `RUNS` runs that pause for approval (the second tool
//!   requires it) started together, and their resumption, all together, with an approval.
//!   Then the runs started together on a multi-thread runtime of 2 workers (wall time and the
//!   process's CPU time).
//! - *Paused*: the heap held by the `RUNS` `PausedRun` values kept in memory, per run, and the
//!   size of each one's `to_json` (and of its compact JSON).
//!
//! The baselines, measured in the same process: the heap of one finished run's transcript
//! (cloned, so that spare capacity does not count) and its JSON; the heap of a paused run's
//! transcript; the direct invokes of the same two tools.
//!
//! Prints one JSON object on stdout (`benches/run.sh` writes it to
//! `$BENCH_RESULTS/many-runs.json`); progress goes to stderr.

use std::convert::Infallible;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::runtime::Runtime;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tool_bench::counting::{Counting, held, peak, reset_peak};
use tool_bench::runloop::{PING_ARGS, Ping, ReplayModel};
use tool_bench::{peak_rss_bytes, rss_bytes};
use tool_runtime::{Agent, Context, Decisions, PausedRun, RunError, RunOutput, Tool, ToolCall};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What the second tool (`file`) does; the first (`lookup`) returns its input at once.
enum Second {
    /// Returns its input at once.
    Plain,
    /// Counts itself parked, then waits until the gate is open.
    Gated {
        gate: watch::Receiver<bool>,
        parked: Arc<AtomicUsize>,
    },
    /// Requires approval: the run pauses with the call pending.
    Approval,
}

/// The agent every figure runs: two tools, a model asking for one call of each, then
/// answering.
fn agent(second: Second) -> Agent {
    let lookup = Tool::builder("lookup", "Looks a number up.")
        .handler(|_ctx: Context, input: Ping| async move { Ok::<_, Infallible>(input.n) })
        .build();
    let file = Tool::builder("file", "Files a number.");
    let file = match second {
        Second::Plain => file
            .handler(|_ctx: Context, input: Ping| async move { Ok::<_, Infallible>(input.n) })
            .build(),
        Second::Approval => file
            .handler(|_ctx: Context, input: Ping| async move { Ok::<_, Infallible>(input.n) })
            .require_approval()
            .build(),
        Second::Gated { gate, parked } => file
            .handler(move |_ctx: Context, input: Ping| {
                let mut gate = gate.clone();
                let parked = Arc::clone(&parked);
                async move {
                    parked.fetch_add(1, Ordering::Relaxed);
                    // A dropped sender lets the call through as well.
                    let _ = gate.wait_for(|open| *open).await;
                    Ok::<_, Infallible>(input.n)
                }
            })
            .build(),
    };
    let turn = vec![
        ToolCall::new("call-0", "lookup", PING_ARGS),
        ToolCall::new("call-1", "file", PING_ARGS),
    ];
    Agent::builder(ReplayModel::with_turns(vec![turn]))
        .tools([lookup, file])
        .max_concurrency(2)
        .max_turns(2)
        .build()
        .expect("the agent builds")
}

type Handles = Vec<JoinHandle<Result<RunOutput, RunError>>>;

/// Starts `n` runs of `agent`, each with its own context, as tasks of the current runtime,
/// their handles into `into`.
fn start(agent: &Agent, n: usize, into: &mut Handles) {
    for _ in 0..n {
        let agent = agent.clone();
        into.push(tokio::spawn(async move {
            agent.run(&Context::new(), "go").await
        }));
    }
}

/// Awaits every run of `handles`: each must answer `done` after `calls` calls (a resumed
/// run's output records the calls made since it resumed).
async fn answers(handles: Handles, calls: usize) {
    for handle in handles {
        let out = handle
            .await
            .expect("no run panics")
            .expect("the run answers");
        assert_eq!((out.text.as_str(), out.calls.len()), ("done", calls));
    }
}

/// Awaits every run of `handles`: each must pause with one call pending; keeps the paused runs.
async fn pauses(handles: Handles, into: &mut Vec<PausedRun>) {
    for handle in handles {
        let error = handle
            .await
            .expect("no run panics")
            .expect_err("the run pauses");
        let paused = error.into_paused().expect("the run paused");
        assert_eq!(paused.pending().len(), 1);
        into.push(paused);
    }
}

/// CPU time of `clock`, in ns.
fn cpu_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall time and CPU time of one measurement, in ns.
#[derive(Clone, Copy)]
struct Timing {
    wall: f64,
    cpu: f64,
}

/// Times `f`: wall time, and the CPU time of `clock` (this thread's on the current-thread
/// runtime, the process's on the multi-thread one).
fn timed<T>(clock: libc::clockid_t, f: impl FnOnce() -> T) -> (T, Timing) {
    let (c0, t0) = (cpu_ns(clock), Instant::now());
    let out = f();
    let timing = Timing {
        wall: t0.elapsed().as_nanos() as f64,
        cpu: (cpu_ns(clock) - c0) as f64,
    };
    (out, timing)
}

/// How many polls in a row the heap must not move for the runs in flight to count as parked.
const STEADY: usize = 64;

/// Runs started together before measuring anything.
const WARM_UP: usize = 64;

const THREAD: libc::clockid_t = libc::CLOCK_THREAD_CPUTIME_ID;
const PROCESS: libc::clockid_t = libc::CLOCK_PROCESS_CPUTIME_ID;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The rounds of one kind of measurement, `n` items each: medians per item and per second.
fn summary(rounds: &[Timing], n: usize) -> Value {
    let n = n as f64;
    let wall = median(rounds.iter().map(|t| t.wall / n).collect());
    let cpu = median(rounds.iter().map(|t| t.cpu / n).collect());
    json!({
        "wall_ns_per_run": wall,
        "cpu_ns_per_run": cpu,
        "runs_per_s_wall": 1e9 / wall,
        "runs_per_s_cpu": 1e9 / cpu,
        "rounds_wall_s": rounds.iter().map(|t| t.wall / 1e9).collect::<Vec<_>>(),
        "rounds_cpu_s": rounds.iter().map(|t| t.cpu / 1e9).collect::<Vec<_>>(),
    })
}

/// The median over rounds of `a[i].cpu / b[i].cpu` (or wall time), with its quartiles.
fn round_ratio(a: &[Timing], b: &[Timing], wall: bool) -> Value {
    let pick = |t: &Timing| if wall { t.wall } else { t.cpu };
    let mut r: Vec<f64> = a.iter().zip(b).map(|(a, b)| pick(a) / pick(b)).collect();
    r.sort_by(f64::total_cmp);
    let q = |p: f64| r[((r.len() - 1) as f64 * p).round() as usize];
    json!({ "median": median(r.clone()), "p25": q(0.25), "p75": q(0.75) })
}

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn main() {
    let quick = std::env::var("QUICK").is_ok_and(|v| v == "1");
    let runs = env_usize("RUNS").unwrap_or(if quick { 1_000 } else { 10_000 });
    let rounds = env_usize("ROUNDS").unwrap_or(if quick { 3 } else { 5 });
    assert!(runs > 0 && rounds > 0, "RUNS and ROUNDS must be positive");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let plain = agent(Second::Plain);
    let approval = agent(Second::Approval);

    // Warm-up: lazily initialised statics. Few runs, so that the RSS before the runs in
    // flight is the process's own.
    let warm = WARM_UP.min(runs);
    let mut kept = Vec::with_capacity(warm);
    rt.block_on(async {
        let mut handles = Vec::with_capacity(warm);
        start(&plain, warm, &mut handles);
        answers(handles, 2).await;
        let mut handles = Vec::with_capacity(warm);
        start(&approval, warm, &mut handles);
        pauses(handles, &mut kept).await;
    });
    drop(kept);

    let mut out = serde_json::Map::new();
    out.insert("runs".into(), json!(runs));
    out.insert("rounds".into(), json!(rounds));
    out.insert("tools".into(), json!(plain.tools().len()));
    out.insert("baseline".into(), baselines(&rt, &plain, &approval));
    eprintln!("many_runs: {runs} runs in flight, parked in a call");
    out.insert("in_flight".into(), in_flight(&rt, runs));
    eprintln!("many_runs: {rounds} rounds of throughput, pause and resume");
    let (throughput, paused) = throughput(&rt, &plain, &approval, runs, rounds);
    out.insert("throughput".into(), throughput);
    out.insert("paused".into(), paused);
    out.insert("peak_rss_bytes_at_end".into(), json!(peak_rss_bytes()));
    println!("{}", Value::Object(out));
}

/// One finished run's transcript and output, and one paused run's transcript: heap and JSON.
fn baselines(rt: &Runtime, plain: &Agent, approval: &Agent) -> Value {
    let before = held();
    let output = rt
        .block_on(plain.run(&Context::new(), "go"))
        .expect("the run answers");
    let output_heap = held() - before;
    let before = held();
    let transcript = output.transcript.clone();
    let transcript_heap = held() - before;
    let transcript_json = serde_json::to_string(&transcript).expect("JSON").len();

    let paused = rt
        .block_on(approval.run(&Context::new(), "go"))
        .expect_err("the run pauses")
        .into_paused()
        .expect("paused");
    let before = held();
    let paused_transcript = paused.transcript().to_vec();
    let paused_transcript_heap = held() - before;
    let paused_transcript_json = serde_json::to_string(&paused_transcript)
        .expect("JSON")
        .len();
    let run_future = std::mem::size_of_val(&plain.run(&Context::new(), "go"));
    json!({
        "run_future_bytes": run_future,
        "run_output_heap_bytes": output_heap,
        "transcript_messages": transcript.len(),
        "transcript_heap_bytes": transcript_heap,
        "transcript_json_bytes": transcript_json,
        "paused_transcript_messages": paused_transcript.len(),
        "paused_transcript_heap_bytes": paused_transcript_heap,
        "paused_transcript_json_bytes": paused_transcript_json,
    })
}

/// `runs` runs started together and parked in their second call: the heap they hold.
fn in_flight(rt: &Runtime, runs: usize) -> Value {
    let (open, gate) = watch::channel(false);
    let parked = Arc::new(AtomicUsize::new(0));
    let gated = agent(Second::Gated {
        gate,
        parked: Arc::clone(&parked),
    });
    let mut handles = Vec::with_capacity(runs);
    let rss_before = rss_bytes();
    let before = held();
    reset_peak();
    let (held_parked, peak_parked, rss_parked, hwm_parked) = rt.block_on(async {
        start(&gated, runs, &mut handles);
        while parked.load(Ordering::Relaxed) < runs {
            tokio::task::yield_now().await;
        }
        // Every run is parked; let each take in its first call's result (until the heap has
        // not moved for a while), so that what is counted is what a parked run holds.
        let (mut last, mut still) = (held(), 0);
        while still < STEADY {
            tokio::task::yield_now().await;
            let now = held();
            (last, still) = if now == last {
                (last, still + 1)
            } else {
                (now, 0)
            };
        }
        let at = (held(), peak(), rss_bytes(), peak_rss_bytes());
        open.send_replace(true);
        answers(handles, 2).await;
        at
    });
    let per_run = |bytes: usize| (bytes.saturating_sub(before)) as f64 / runs as f64;
    json!({
        "heap_bytes_per_run": per_run(held_parked),
        "heap_peak_bytes_per_run": per_run(peak_parked),
        "rss_before_bytes": rss_before,
        "rss_parked_bytes": rss_parked,
        "peak_rss_bytes": hwm_parked,
    })
}

/// The rounds: direct invokes, runs one after another, runs together (current-thread and
/// 2 workers), runs that pause, their resumption. Returns the throughput figures and the
/// paused runs' memory (measured in the first round).
fn throughput(
    rt: &Runtime,
    plain: &Agent,
    approval: &Agent,
    runs: usize,
    rounds: usize,
) -> (Value, Value) {
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a multi-thread tokio runtime");
    let (lookup, file) = (&plain.tools()[0], &plain.tools()[1]);
    let mut direct = Vec::new();
    let mut sequential = Vec::new();
    let mut together = Vec::new();
    let mut together_multi = Vec::new();
    let mut pause = Vec::new();
    let mut resume = Vec::new();
    let mut paused_memory = Value::Null;
    for round in 0..rounds {
        direct.push(
            timed(THREAD, || {
                rt.block_on(async {
                    let ctx = Context::new();
                    for _ in 0..runs {
                        black_box(lookup.invoke(&ctx, PING_ARGS.as_bytes()).await);
                        black_box(file.invoke(&ctx, PING_ARGS.as_bytes()).await);
                    }
                });
            })
            .1,
        );
        sequential.push(
            timed(THREAD, || {
                rt.block_on(async {
                    for _ in 0..runs {
                        let out = plain.run(&Context::new(), "go").await;
                        assert_eq!(out.expect("the run answers").calls.len(), 2);
                    }
                });
            })
            .1,
        );
        together.push(
            timed(THREAD, || {
                rt.block_on(async {
                    let mut handles = Vec::with_capacity(runs);
                    start(plain, runs, &mut handles);
                    answers(handles, 2).await;
                });
            })
            .1,
        );
        together_multi.push(
            timed(PROCESS, || {
                multi.block_on(async {
                    let mut handles = Vec::with_capacity(runs);
                    start(plain, runs, &mut handles);
                    answers(handles, 2).await;
                });
            })
            .1,
        );
        // The runs that pause; in the first round, what their paused runs hold.
        let before = held();
        let (kept, timing) = timed(THREAD, || {
            let mut kept = Vec::with_capacity(runs);
            rt.block_on(async {
                let mut handles = Vec::with_capacity(runs);
                start(approval, runs, &mut handles);
                pauses(handles, &mut kept).await;
            });
            kept
        });
        pause.push(timing);
        if round == 0 {
            let heap = held() - before;
            let pretty: usize = kept.iter().map(|p| p.to_json().expect("JSON").len()).sum();
            let compact: usize = kept
                .iter()
                .map(|p| serde_json::to_string(p).expect("JSON").len())
                .sum();
            paused_memory = json!({
                "heap_bytes_per_run": heap as f64 / runs as f64,
                "inline_bytes": std::mem::size_of::<PausedRun>(),
                "to_json_bytes_per_run": pretty as f64 / runs as f64,
                "compact_json_bytes_per_run": compact as f64 / runs as f64,
            });
        }
        resume.push(
            timed(THREAD, || {
                rt.block_on(async {
                    let handles: Handles = kept
                        .into_iter()
                        .map(|paused| {
                            let agent = approval.clone();
                            tokio::spawn(async move {
                                let id = paused.pending()[0].id().to_owned();
                                let decisions = Decisions::new().approve(id);
                                agent.resume(&Context::new(), paused, decisions).await
                            })
                        })
                        .collect();
                    answers(handles, 1).await;
                });
            })
            .1,
        );
    }
    let figures = json!({
        "direct_invoke_pair": summary(&direct, runs),
        "sequential": summary(&sequential, runs),
        "together": summary(&together, runs),
        "together_multi_thread_2": summary(&together_multi, runs),
        "pause_together": summary(&pause, runs),
        "resume_together": summary(&resume, runs),
        "ratios": {
            "together_cpu_to_direct_invoke": round_ratio(&together, &direct, false),
            "together_cpu_to_sequential": round_ratio(&together, &sequential, false),
            "sequential_cpu_to_direct_invoke": round_ratio(&sequential, &direct, false),
            "pause_cpu_to_together": round_ratio(&pause, &together, false),
            "resume_cpu_to_together": round_ratio(&resume, &together, false),
            "multi_thread_2_wall_to_together": round_ratio(&together_multi, &together, true),
            "multi_thread_2_cpu_to_together": round_ratio(&together_multi, &together, false),
        },
    });
    (figures, paused_memory)
}
