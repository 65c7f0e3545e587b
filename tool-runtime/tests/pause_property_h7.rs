//! H7, a paused run is the same run: "A paused run carries everything that governs the run:
//! its options (usage limits, stop-at tools, a tool choice already spent, a typed answer's
//! schema), its counters (requests, tokens, calls, each tool's consecutive failures) and its
//! trace context. Resumed, it behaves as if it had never paused: the same script with and
//! without a pause sends the same requests, runs the same handlers and ends with the same
//! kind."
//!
//! The property: for generated scripts (calls needing approval, deferred calls, invalid
//! arguments, handlers asking to retry, usage limits, stopping tools, tool choices, typed
//! answers through the final-answer tool and natively, streamed runs), the run straight
//! through and the run paused at each possible pause point (and at every point at once), each
//! pause written to JSON, read back and resumed by a new agent on a new model holding the
//! remaining turns, give the same requests on the wire, the same handler runs, the same end,
//! the same usage and the same transcript.
//!
//! What differs with a pause, by design, and is compared accordingly:
//! - The order of handler runs within a turn: a turn's calls run concurrently, and a pause
//!   runs the approved calls of its turn after the others. The handler runs and the call
//!   records are compared as sets (each names its call id), the requests and transcripts in
//!   order.
//! - A paused run reports its pending calls (kind `AwaitingApproval` or `Deferred`) before
//!   the resume reports how they ended: those reports are left out. A streamed run starts
//!   each segment with `Started` (each must advertise the same tools) and ends all but the
//!   last with `Paused`; its other events are compared in order, its `CallFinished` as a set.
//! - A deferred call's result comes from the decision instead of a handler: the straight run
//!   holds a twin with the same name and schema whose handler returns that result, and the
//!   test logs the decision as the twin's run. A deferred call that fails permanently is not
//!   generated: the straight run cancels the calls after it in its turn, while a paused run
//!   ran them before it paused.
//! - Each segment has a model of its own holding the remaining turns: a script that runs out
//!   is compared by the absolute number of the request that found it empty.
//! - A typed run never stops at a tool: its end does not depend on pauses (the tool's result
//!   is no typed answer, and the run ends in an error that keeps none of the run).
//!
//! The cases are reproducible: each script comes from its seed (a small PRNG below). A failure
//! prints the seed, the script and the variant; rerun one seed with
//! `H7_SEED=<seed> cargo test -p tool-runtime --test pause_property_h7 -- --nocapture`.
//! `H7_SCRIPTS=<n>` runs more scripts.
//!
//! Then targeted tests, one per gap the property was written for.

mod support {
    pub mod spans;
    pub mod trace;
}

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use support::spans::Spans;
use tool_runtime::RunRequest;
use tool_runtime::{
    Agent, AnswerFormat, Approval, BoxError, Context, Decisions, ErrorKind, FinishReason,
    MemoryLedger, Message, ModelError, OutcomeKind, PausedRun, PendingKind, RecordedRequest,
    ResumeError, ResumeOptions, RunError, RunEvent, RunOptions, RunOutput, RunStream, Schema,
    ScriptedModel, ScriptedTurn, Tool, ToolChoice, ToolError, ToolSpec, Usage, UsageLimits,
};

// ─── The tools ───────────────────────────────────────────────────────────────────────────────

/// Arguments of any shape (an object root).
type Args = BTreeMap<String, Value>;

/// Input of `window`: invalid arguments happen (a day out of range, text that is not JSON).
#[derive(Schema, Debug)]
pub struct Window {
    /// Days ahead.
    #[schema(range = 1..=30)]
    pub days: u32,
}

/// Input of `flaky`: `ok: false` makes its handler ask the model to retry (L1).
#[derive(Schema, Debug)]
pub struct Flaky {
    /// Whether the call works.
    pub ok: bool,
}

/// Input of `gate`, the tool whose calls may need approval.
#[derive(Schema, Debug)]
pub struct Gate {
    /// What to open.
    #[schema(pattern = "^[a-z]+$")]
    pub target: String,
}

/// Input of `ship`, the deferred tool.
#[derive(Schema, Debug)]
pub struct Ship {
    /// The order.
    #[schema(pattern = "^o-[0-9]+$")]
    pub order_id: String,
}

/// The typed answer (O2).
#[derive(Schema, Debug)]
pub struct Answer {
    /// A city, lowercase.
    #[schema(pattern = "^[a-z]+$")]
    pub city: String,
    /// How many.
    #[schema(range = 1..=9)]
    pub count: u32,
}

/// The handlers' runs, shared by every agent of one run: `<call id> <tool> <input>`.
type Log = Arc<Mutex<Vec<String>>>;

fn logged(log: &Log, ctx: &Context, tool: &str, input: &str) {
    let id = ctx.call().map_or("?", |call| &*call.id);
    log.lock()
        .expect("not poisoned")
        .push(format!("{id} {tool} {input}"));
}

/// The result of shipping `order`: what the twin's handler returns and what the resume gives
/// the deferred call. An order whose number ends in 7 asks the model to retry (L1), in 8 fails
/// with a text for the model, in 9 fails with an error the model does not see (E2).
fn shipped(order: &str) -> Result<String, BoxError> {
    match order.as_bytes().last() {
        Some(b'7') => Err(ToolError::retry("the warehouse is busy, try another order").into()),
        Some(b'8') => Err(ToolError::new("out of stock").into()),
        Some(b'9') => Err(std::io::Error::other("the warehouse's database is down").into()),
        _ => Ok(format!("{order} shipped")),
    }
}

/// How the agents of one case are built: the same for the straight run and for every agent of
/// a paused run (only the approvals and whether `ship` is deferred differ).
#[derive(Debug, Clone)]
struct Config {
    /// The agent's retry budget (L1): its tools without one of their own, and the typed answer.
    agent_retries: u32,
    window_retries: u32,
    flaky_retries: u32,
    max_turns: Option<usize>,
    options: RunOptions,
    /// Whether the options are the run's (`RunRequest::options`) or the agent's (`AgentBuilder::options`).
    options_on_agent: bool,
    answering: Answering,
    /// Whether the runs are streamed (`execute_stream`).
    stream: bool,
    /// Whether `window` is hidden when the run starts (A2): then the agents that resume it
    /// show it, and the run must still advertise what it advertised at its start (A8).
    window_hidden: bool,
    /// Whether `flaky` is sequential (L4).
    sequential: bool,
    max_concurrency: Option<usize>,
    /// Whether the agents seal paused runs with a key (H3).
    keyed: bool,
    /// What each resume adds: nothing, the run's own limits again (a no-op tightening), or a
    /// fresh ledger (H9).
    resume_options: ResumeWith,
}

#[derive(Debug, Clone, Copy)]
enum ResumeWith {
    Nothing,
    OwnLimits,
    Ledger,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            agent_retries: 3,
            window_retries: 3,
            flaky_retries: 3,
            max_turns: None,
            options: RunOptions::new(),
            options_on_agent: false,
            answering: Answering::Plain,
            stream: false,
            window_hidden: false,
            sequential: false,
            max_concurrency: None,
            keyed: false,
            resume_options: ResumeWith::Nothing,
        }
    }
}

/// How a run answers (O2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answering {
    /// In free text (`run`).
    Plain,
    /// A typed answer through the final-answer tool (`RunRequest::typed`, a model without native
    /// answers).
    Tool,
    /// A typed answer natively (`ScriptedModel::with_native_answers`).
    Native,
}

/// The tools: `echo` (plain), `window` (an input schema), `flaky` (asks to retry), `gate`
/// (needs approval for the calls whose ids are in `approvals`), `ship` (deferred, or with
/// `deferred` false a twin whose handler returns what the resume gives).
fn tools(
    config: &Config,
    log: &Log,
    approvals: &Arc<BTreeSet<String>>,
    deferred: bool,
) -> Vec<Tool> {
    tools_shown(config, log, approvals, deferred, false)
}

/// [`tools`], with `window` available when `shown`, if its availability is in question
/// ([`Config::window_hidden`]).
fn tools_shown(
    config: &Config,
    log: &Log,
    approvals: &Arc<BTreeSet<String>>,
    deferred: bool,
    shown: bool,
) -> Vec<Tool> {
    let echo = {
        let log = Arc::clone(log);
        Tool::builder("echo", "Repeats its arguments.")
            .handler(move |ctx: Context, args: Args| {
                logged(
                    &log,
                    &ctx,
                    "echo",
                    &serde_json::to_string(&args).expect("an object"),
                );
                async move { Ok::<_, Infallible>(args) }
            })
            .build()
    };
    let window = {
        let log = Arc::clone(log);
        let builder = Tool::builder("window", "Sets a maintenance window.");
        let builder = if config.window_hidden {
            builder.available_fn(move |_ctx: &Context| Ok::<_, Infallible>(shown))
        } else {
            builder
        };
        builder
            .retries(config.window_retries)
            .handler(move |ctx: Context, input: Window| {
                logged(&log, &ctx, "window", &input.days.to_string());
                async move { Ok::<_, Infallible>(format!("set for {} days", input.days)) }
            })
            .build()
    };
    let flaky = {
        let log = Arc::clone(log);
        let builder = Tool::builder("flaky", "Works when it can.");
        let builder = if config.sequential {
            builder.sequential()
        } else {
            builder
        };
        builder
            .retries(config.flaky_retries)
            .handler(move |ctx: Context, input: Flaky| {
                logged(&log, &ctx, "flaky", &input.ok.to_string());
                async move {
                    if input.ok {
                        Ok("flaky worked".to_owned())
                    } else {
                        Err(ToolError::retry("try again with ok set"))
                    }
                }
            })
            .build()
    };
    let gate = {
        let log = Arc::clone(log);
        let approvals = Arc::clone(approvals);
        Tool::builder("gate", "Opens a gate.")
            .handler(move |ctx: Context, input: Gate| {
                logged(&log, &ctx, "gate", &input.target);
                async move { Ok::<_, Infallible>(format!("{} opened", input.target)) }
            })
            .approval_fn(move |ctx: &Context, _input: &Gate| {
                let id = ctx.call().map(|call| &*call.id).unwrap_or_default();
                Ok::<_, Infallible>(if approvals.contains(id) {
                    Approval::required("the variant asks for it")
                } else {
                    Approval::NotRequired
                })
            })
            .build()
    };
    let ship = if deferred {
        Tool::builder("ship", "Ships an order.")
            .deferred::<Ship>()
            .build()
    } else {
        let log = Arc::clone(log);
        Tool::builder("ship", "Ships an order.")
            .handler(move |ctx: Context, input: Ship| {
                logged(&log, &ctx, "ship", &input.order_id);
                async move { shipped(&input.order_id) }
            })
            .build()
    };
    vec![echo, window, flaky, gate, ship]
}

fn agent(config: &Config, model: ScriptedModel, tools: Vec<Tool>) -> Agent {
    let mut builder = Agent::builder(model)
        .instructions("Use the tools.")
        .tools(tools)
        .retries(config.agent_retries);
    if let Some(n) = config.max_turns {
        builder = builder.max_turns(n);
    }
    if let Some(n) = config.max_concurrency {
        builder = builder.max_concurrency(n);
    }
    if config.keyed {
        builder = builder.state_key(b"the key of the property's agents".to_vec());
    }
    if config.options_on_agent {
        builder = builder.options(config.options.clone());
    }
    builder.build().expect("the tools are declared right")
}

fn model(config: &Config, turns: &[TurnSpec]) -> ScriptedModel {
    let model = ScriptedModel::new(turns.iter().map(TurnSpec::scripted));
    if config.answering == Answering::Native {
        model.with_native_answers()
    } else {
        model
    }
}

// ─── Scripts ─────────────────────────────────────────────────────────────────────────────────

/// SplitMix64: small, seeded, the same everywhere.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x9e37_79b9_7f4a_7c15)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// In `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[(self.next() % items.len() as u64) as usize]
    }
}

#[derive(Debug, Clone)]
struct CallSpec {
    id: String,
    tool: &'static str,
    arguments: String,
}

#[derive(Debug, Clone)]
struct TurnSpec {
    text: String,
    calls: Vec<CallSpec>,
    usage: (u64, u64),
    /// Cut off at the output token limit.
    truncated: bool,
}

impl TurnSpec {
    fn scripted(&self) -> ScriptedTurn {
        let mut turn = ScriptedTurn::new()
            .text(self.text.clone())
            .usage(self.usage.0, self.usage.1);
        for call in &self.calls {
            turn = turn.call(call.id.clone(), call.tool, call.arguments.clone());
        }
        if self.truncated {
            turn = turn.finish(FinishReason::Length);
        }
        turn
    }
}

#[derive(Debug, Clone)]
struct Script {
    config: Config,
    turns: Vec<TurnSpec>,
}

const NAMES: [&str; 5] = ["echo", "window", "flaky", "gate", "ship"];

fn arguments(rng: &mut Rng, tool: &str) -> String {
    match tool {
        "echo" if rng.chance(10) => r#"{"n": "#.to_owned(),
        "echo" => format!(r#"{{"n":{}}}"#, rng.range(0, 99)),
        "window" => match rng.range(0, 9) {
            0..=5 => format!(r#"{{"days":{}}}"#, rng.range(1, 30)),
            6..=8 => format!(r#"{{"days":{}}}"#, rng.range(31, 99)),
            _ => r#"{"days":"#.to_owned(),
        },
        "flaky" if rng.chance(50) => r#"{"ok":true}"#.to_owned(),
        "flaky" => r#"{"ok":false}"#.to_owned(),
        "gate" if rng.chance(85) => {
            format!(
                r#"{{"target":"{}"}}"#,
                rng.pick(&["db", "web", "cache", "mq"])
            )
        }
        "gate" => r#"{"target":"DB!"}"#.to_owned(),
        "ship" if rng.chance(85) => format!(r#"{{"order_id":"o-{}"}}"#, rng.range(1, 999)),
        "ship" => r#"{"order_id":"x"}"#.to_owned(),
        "final_answer" => answer_text(rng),
        _ => "{}".to_owned(),
    }
}

/// A typed answer: one that fits, one that breaks the schema, or not JSON.
fn answer_text(rng: &mut Rng) -> String {
    match rng.range(0, 9) {
        0..=5 => format!(
            r#"{{"city":"{}","count":{}}}"#,
            rng.pick(&["paris", "oslo", "lima"]),
            rng.range(1, 9)
        ),
        6..=8 => r#"{"city":"Paris","count":0}"#.to_owned(),
        _ => "the answer is Paris".to_owned(),
    }
}

fn generate(seed: u64) -> Script {
    let mut rng = Rng::new(seed);
    let answering = match rng.range(0, 99) {
        0..=59 => Answering::Plain,
        60..=79 => Answering::Tool,
        _ => Answering::Native,
    };
    let n = rng.range(1, 6) as usize;
    let weighted = [
        "echo", "echo", "window", "window", "window", "flaky", "flaky", "gate", "gate", "gate",
        "gate", "ship", "ship", "nope",
    ];
    let mut turns = Vec::with_capacity(n);
    for t in 1..=n {
        let usage = (rng.range(5, 60), rng.range(1, 20));
        let text = if rng.chance(40) {
            format!("turn {t}")
        } else {
            String::new()
        };
        let early = if answering == Answering::Plain { 4 } else { 15 };
        let mut calls = Vec::new();
        let call = |rng: &mut Rng, calls: &mut Vec<CallSpec>, tool: &'static str| {
            calls.push(CallSpec {
                id: format!("t{t}c{}", calls.len()),
                tool,
                arguments: arguments(rng, tool),
            });
        };
        if t == n || rng.chance(early) {
            match answering {
                Answering::Plain => {
                    turns.push(TurnSpec {
                        text: format!("answer {t}"),
                        calls,
                        usage,
                        truncated: rng.chance(4),
                    });
                }
                Answering::Native => {
                    turns.push(TurnSpec {
                        text: answer_text(&mut rng),
                        calls,
                        usage,
                        truncated: rng.chance(4),
                    });
                }
                Answering::Tool if rng.chance(85) => {
                    for _ in 0..rng.range(0, 2) {
                        let tool = rng.pick(&weighted);
                        call(&mut rng, &mut calls, tool);
                    }
                    let at = rng.range(0, calls.len() as u64) as usize;
                    call(&mut rng, &mut calls, "final_answer");
                    let answer = calls.pop().expect("just pushed");
                    calls.insert(at, answer);
                    for (i, c) in calls.iter_mut().enumerate() {
                        c.id = format!("t{t}c{i}");
                    }
                    turns.push(TurnSpec {
                        text,
                        calls,
                        usage,
                        truncated: false,
                    });
                }
                Answering::Tool => {
                    turns.push(TurnSpec {
                        text: format!("answer {t} in text"),
                        calls,
                        usage,
                        truncated: false,
                    });
                }
            }
            continue;
        }
        for _ in 0..rng.range(1, 3) {
            let tool = rng.pick(&weighted);
            call(&mut rng, &mut calls, tool);
        }
        // Now and then the model gives a call an id it gave before, in an earlier turn or in
        // this one.
        if rng.chance(4) {
            let earlier: Vec<String> = turns
                .iter()
                .flat_map(|turn: &TurnSpec| turn.calls.iter().map(|c| c.id.clone()))
                .chain(calls.iter().skip(1).map(|c| c.id.clone()))
                .collect();
            if !earlier.is_empty() {
                let at = rng.range(0, earlier.len() as u64 - 1) as usize;
                calls[0].id = earlier[at].clone();
            }
        }
        turns.push(TurnSpec {
            text,
            calls,
            usage,
            truncated: false,
        });
    }

    let total_calls: u64 = turns.iter().map(|t| t.calls.len() as u64).sum();
    let mut options = RunOptions::new();
    if rng.chance(35) {
        let choice = match rng.range(0, 3) {
            0 => ToolChoice::Required,
            1 => ToolChoice::Tool(rng.pick(&NAMES).to_owned()),
            2 => ToolChoice::Auto,
            _ => ToolChoice::None,
        };
        options = options.tool_choice(choice);
        if rng.chance(15) {
            options = options.every_turn();
        }
    }
    let mut limits = UsageLimits::new();
    if rng.chance(30) {
        limits = limits.requests(rng.range(1, n as u64 + 1));
    }
    if rng.chance(30) {
        limits = limits.tool_calls(rng.range(0, total_calls + 1));
    }
    if rng.chance(20) {
        // At a turn's boundary, or just past it.
        let upto = rng.range(0, n as u64) as usize;
        let used: u64 = turns[..upto].iter().map(|t| t.usage.0 + t.usage.1).sum();
        limits = limits.total_tokens(used + rng.range(0, 1));
    }
    if rng.chance(10) {
        let upto = rng.range(0, n as u64) as usize;
        let used: u64 = turns[..upto].iter().map(|t| t.usage.1).sum();
        limits = limits.output_tokens(used + rng.range(0, 1));
    }
    if rng.chance(10) {
        let upto = rng.range(0, n as u64) as usize;
        let used: u64 = turns[..upto].iter().map(|t| t.usage.0).sum();
        limits = limits.input_tokens(used + rng.range(0, 1));
    }
    options = options.limits(limits);
    // A typed run that stops at a tool ends in an error whatever the pauses (the tool's
    // result is no typed answer), and that error keeps none of the run: not a case for H7.
    if answering == Answering::Plain && rng.chance(25) {
        options = options.stop_at(rng.pick(&NAMES));
    }
    let config = Config {
        agent_retries: rng.range(1, 2) as u32,
        window_retries: rng.range(1, 2) as u32,
        flaky_retries: rng.range(1, 2) as u32,
        max_turns: rng.chance(15).then(|| rng.range(1, n as u64 + 1) as usize),
        options,
        options_on_agent: rng.chance(30),
        answering,
        stream: answering == Answering::Plain && rng.chance(35),
        window_hidden: rng.chance(10),
        sequential: rng.chance(20),
        max_concurrency: rng.chance(20).then_some(1),
        keyed: rng.chance(20),
        resume_options: match rng.range(0, 5) {
            0 => ResumeWith::OwnLimits,
            1 => ResumeWith::Ledger,
            _ => ResumeWith::Nothing,
        },
    };
    Script { config, turns }
}

/// The variants of a script: which `gate` calls need approval. Each turn with a `gate` call
/// is a pause point (all its `gate` calls, and for a turn with several its last one alone);
/// then every point at once, and the `ship` calls alone (a deferred call always pauses).
fn variants(script: &Script) -> Vec<(String, BTreeSet<String>)> {
    let mut out: Vec<(String, BTreeSet<String>)> = Vec::new();
    let mut every = BTreeSet::new();
    let mut ships = false;
    for (t, turn) in script.turns.iter().enumerate() {
        let gates: Vec<String> = turn
            .calls
            .iter()
            .filter(|c| c.tool == "gate")
            .map(|c| c.id.clone())
            .collect();
        ships |= turn.calls.iter().any(|c| c.tool == "ship");
        if gates.is_empty() {
            continue;
        }
        every.extend(gates.iter().cloned());
        out.push((
            format!("gates of turn {}", t + 1),
            gates.iter().cloned().collect(),
        ));
        if gates.len() > 1 {
            let last = gates.last().cloned().into_iter().collect();
            out.push((format!("last gate of turn {}", t + 1), last));
        }
    }
    if !every.is_empty() || ships {
        out.push(("every point".to_owned(), every));
    }
    if ships && out.len() > 1 {
        out.push(("deferred calls only".to_owned(), BTreeSet::new()));
    }
    let mut seen = BTreeSet::new();
    out.retain(|(_, set)| seen.insert(set.clone()));
    out
}

// ─── What a run shows ────────────────────────────────────────────────────────────────────────

/// A request as the model received it.
#[derive(Debug, PartialEq)]
struct Request {
    instructions: Option<String>,
    messages: Vec<Message>,
    tools: Vec<ToolSpec>,
    tool_choice: Option<ToolChoice>,
    answer: Option<AnswerFormat>,
}

impl From<RecordedRequest> for Request {
    fn from(r: RecordedRequest) -> Self {
        Self {
            instructions: r.instructions,
            messages: r.messages,
            tools: r.tools,
            tool_choice: r.tool_choice,
            answer: r.answer,
        }
    }
}

/// How a run ended.
#[derive(Debug, PartialEq)]
enum End {
    Answer {
        text: String,
        stopped_at: Option<String>,
        advertised: Vec<String>,
    },
    Error {
        kind: ErrorKind,
        tool: Option<String>,
        call_id: Option<String>,
        message: String,
        violations: String,
    },
}

/// A call's record (E3): turn, position, id, tool, kind, model-facing text.
type Record = (usize, usize, String, String, String, String);

/// Everything one run showed, over all its segments.
#[derive(Debug, Default)]
struct Observed {
    requests: Vec<Request>,
    end: Option<End>,
    usage: Vec<Usage>,
    transcript: Vec<Message>,
    /// The handlers' runs, sorted: the calls of one turn run concurrently, and a pause runs
    /// the approved calls of its turn after the others, so only the set is the same.
    log: Vec<String>,
    /// The records of the calls that ended (not those left pending at a pause), sorted as
    /// the log is.
    records: Vec<Record>,
    /// A streamed run's events, in order: text deltas, calls asked for, turn ends. Each
    /// call's `CallFinished` is in `records`; `Started` is checked per segment.
    events: Vec<String>,
    /// How many times the run paused.
    pauses: usize,
}

fn record(r: &tool_runtime::CallRecord) -> Option<Record> {
    let pending = matches!(
        r.kind(),
        OutcomeKind::AwaitingApproval | OutcomeKind::Deferred
    );
    (!pending).then(|| {
        (
            r.turn,
            r.index,
            r.id.to_string(),
            r.name.to_string(),
            format!("{:?}", r.kind()),
            r.text().to_owned(),
        )
    })
}

fn end_of_error(e: &RunError, requests_before: usize) -> End {
    // The scripted model numbers its requests from 1; a segment's model starts again.
    let message = match e.model_error() {
        Some(ModelError::ScriptExhausted { request, .. }) => {
            format!(
                "the script ran out at request {}",
                requests_before + request
            )
        }
        _ => e.message().to_owned(),
    };
    End::Error {
        kind: e.kind(),
        tool: e.tool().map(str::to_owned),
        call_id: e.call_id().map(str::to_owned),
        message,
        violations: format!("{:?}", e.violations()),
    }
}

/// How one segment of a run ended.
enum Ended {
    Output(Box<RunOutput>),
    Paused(Box<PausedRun>),
    Failed(Box<RunError>),
}

/// Where a segment starts.
enum Begin {
    Fresh,
    Resume(Box<PausedRun>, Decisions),
}

const INPUT: &str = "Open the gates and ship the orders.";

/// Runs one segment on `agent`, adding what it shows to `seen`.
async fn segment(
    agent: &Agent,
    config: &Config,
    from: Begin,
    seen: &mut Observed,
    advertised: &mut Vec<Vec<String>>,
) -> Ended {
    let ctx = Context::new();
    let options = config.options.clone();
    let on_agent = config.options_on_agent;
    if config.stream {
        let stream = match from {
            Begin::Fresh if on_agent => agent.run_stream(&ctx, INPUT),
            Begin::Fresh => agent.execute_stream(&ctx, RunRequest::new(INPUT).options(options)),
            Begin::Resume(paused, decisions) => {
                agent.execute_stream(&ctx, RunRequest::resume(*paused, decisions))
            }
        };
        return drain(stream, seen, advertised).await;
    }
    let resume_options = match config.resume_options {
        ResumeWith::Nothing => ResumeOptions::new(),
        ResumeWith::OwnLimits => ResumeOptions::new().limits(*options.usage_limits()),
        ResumeWith::Ledger => ResumeOptions::new().ledger(MemoryLedger::new()),
    };
    let result = match (config.answering, from) {
        (Answering::Plain, Begin::Fresh) if on_agent => agent.run(&ctx, INPUT).await,
        (Answering::Plain, Begin::Fresh) => {
            agent
                .execute(&ctx, RunRequest::new(INPUT).options(options))
                .await
        }
        (Answering::Plain, Begin::Resume(paused, decisions)) => match config.resume_options {
            ResumeWith::Nothing => agent.resume(&ctx, *paused, decisions).await,
            _ => {
                agent
                    .execute(
                        &ctx,
                        RunRequest::resume(*paused, decisions).resume_options(resume_options),
                    )
                    .await
            }
        },
        (_, Begin::Fresh) => agent
            .execute(
                &ctx,
                RunRequest::new(INPUT)
                    .options((!on_agent).then_some(options))
                    .typed::<Answer>(),
            )
            .await
            .map(|typed| typed.output),
        (_, Begin::Resume(paused, decisions)) => agent
            .execute(
                &ctx,
                RunRequest::resume(*paused, decisions)
                    .resume_options(resume_options)
                    .typed::<Answer>(),
            )
            .await
            .map(|typed| typed.output),
    };
    match result {
        Ok(out) => {
            seen.records.extend(out.calls.iter().filter_map(record));
            Ended::Output(Box::new(out))
        }
        Err(e) => {
            seen.records.extend(e.calls().iter().filter_map(record));
            match e.into_paused() {
                Ok(paused) => Ended::Paused(Box::new(paused)),
                Err(e) => Ended::Failed(Box::new(e)),
            }
        }
    }
}

async fn drain(
    mut stream: RunStream,
    seen: &mut Observed,
    advertised: &mut Vec<Vec<String>>,
) -> Ended {
    while let Some(item) = stream.next().await {
        let event = match item {
            Ok(event) => event,
            Err(e) => return Ended::Failed(Box::new(e)),
        };
        match event {
            RunEvent::Started { advertised: names } => advertised.push(names.to_vec()),
            RunEvent::TextDelta { turn, text } => seen.events.push(format!("text {turn} {text}")),
            RunEvent::ToolCall { turn, index, call } => seen.events.push(format!(
                "call {turn} {index} {} {} {}",
                call.id, call.name, call.arguments
            )),
            RunEvent::TurnEnd {
                turn,
                usage,
                finish,
            } => seen.events.push(format!("end {turn} {usage:?} {finish:?}")),
            RunEvent::CallFinished(r) => seen.records.extend(record(&r)),
            RunEvent::Finished(out) => return Ended::Output(Box::new(out)),
            RunEvent::Paused(paused) => return Ended::Paused(paused),
            other => seen.events.push(format!("{other:?}")),
        }
    }
    panic!("the stream ended without Finished, Paused or an error");
}

/// The decisions that make a paused run go on as the straight run did: approve every call
/// waiting for approval, give each deferred call what the twin's handler returns (and log it
/// as the twin's run).
fn decide(paused: &PausedRun, log: &Log) -> Decisions {
    let mut decisions = Decisions::new();
    for call in paused.pending() {
        match call.kind() {
            PendingKind::Approval => decisions = decisions.approve(call.id()),
            PendingKind::Deferred => {
                let order = call.arguments()["order_id"].as_str().unwrap_or_default();
                log.lock()
                    .expect("not poisoned")
                    .push(format!("{} ship {order}", call.id()));
                decisions = match shipped(order) {
                    Ok(text) => decisions.result(call.id(), &text),
                    Err(error) => decisions.failed(call.id(), error),
                };
            }
            _ => unreachable!("no other kind is made here"),
        }
    }
    decisions
}

/// Runs `script` with `approvals` needing approval and `ship` deferred when `pausing`; at
/// each pause, the paused run goes through JSON to a new agent on a new model holding the
/// remaining turns, and is resumed with [`decide`]'s decisions.
async fn observe(
    script: &Script,
    approvals: BTreeSet<String>,
    pausing: bool,
) -> Result<Observed, String> {
    let config = &script.config;
    let log = Log::default();
    let approvals = Arc::new(approvals);
    let mut seen = Observed::default();
    let mut advertised = Vec::new();
    let mut from = Begin::Fresh;
    let mut run_id: Option<String> = None;
    let mut pause_ids = BTreeSet::new();
    let mut cursor = 0;
    loop {
        let model = model(config, &script.turns[cursor.min(script.turns.len())..]);
        // Every agent that resumes the run shows `window`, hidden or not when it started.
        let shown = seen.pauses > 0;
        let tools = tools_shown(config, &log, &approvals, pausing, shown);
        let agent = agent(config, model.clone(), tools);
        let ended = segment(&agent, config, from, &mut seen, &mut advertised).await;
        let before = cursor;
        let requests = model.requests();
        cursor += requests.len();
        seen.requests
            .extend(requests.into_iter().map(Request::from));
        let (usage, transcript, end) = match ended {
            Ended::Output(out) => {
                let out = *out;
                (
                    out.usage,
                    out.transcript,
                    End::Answer {
                        text: out.text,
                        stopped_at: out.stopped_at,
                        advertised: out.advertised.to_vec(),
                    },
                )
            }
            Ended::Failed(e) => {
                let end = end_of_error(&e, before);
                (e.usage().to_vec(), e.transcript().to_vec(), end)
            }
            Ended::Paused(paused) => {
                seen.pauses += 1;
                if !pausing {
                    return Err("the straight run paused".to_owned());
                }
                // H3, H9: through JSON and back unchanged, one run id, a new pause id.
                let text = paused.to_json().map_err(|e| e.to_string())?;
                let back = PausedRun::from_json(&text).map_err(|e| e.to_string())?;
                if back != *paused {
                    return Err("the paused run changed through JSON".to_owned());
                }
                if *run_id.get_or_insert_with(|| back.run_id().to_owned()) != back.run_id() {
                    return Err("the run id changed at a pause".to_owned());
                }
                if !pause_ids.insert(back.pause_id().to_owned()) {
                    return Err("two pauses with one id".to_owned());
                }
                if back.options() != &config.options {
                    return Err(format!(
                        "the paused run holds other options: {:?}",
                        back.options()
                    ));
                }
                if back.turns() != cursor {
                    return Err(format!(
                        "the paused run says {} turns, the model got {cursor} requests",
                        back.turns()
                    ));
                }
                let decisions = decide(&back, &log);
                from = Begin::Resume(Box::new(back), decisions);
                if seen.pauses > 2 * script.turns.len() + 2 {
                    return Err("the run keeps pausing".to_owned());
                }
                continue;
            }
        };
        seen.usage = usage;
        seen.transcript = transcript;
        seen.end = Some(end);
        break;
    }
    seen.log = std::mem::take(&mut *log.lock().expect("not poisoned"));
    seen.log.sort();
    seen.records.sort();
    // A8: every segment advertises what the run advertised when it started.
    if advertised.windows(2).any(|w| w[0] != w[1]) {
        return Err(format!("the segments advertised {advertised:?}"));
    }
    Ok(seen)
}

/// Where `paused` and `straight` differ, if they do.
fn compare(straight: &Observed, paused: &Observed) -> Result<(), String> {
    let n = straight.requests.len().max(paused.requests.len());
    for i in 0..n {
        let (a, b) = (straight.requests.get(i), paused.requests.get(i));
        if a != b {
            return Err(format!(
                "request {} differs ({} straight, {} with pauses)\nstraight: {a:#?}\npaused: {b:#?}",
                i + 1,
                straight.requests.len(),
                paused.requests.len()
            ));
        }
    }
    fn same<T: PartialEq + std::fmt::Debug>(what: &str, a: &T, b: &T) -> Result<(), String> {
        if a == b {
            return Ok(());
        }
        Err(format!(
            "the {what} differ\nstraight: {a:#?}\npaused: {b:#?}"
        ))
    }
    same("ends", &straight.end, &paused.end)?;
    same("usages", &straight.usage, &paused.usage)?;
    same("transcripts", &straight.transcript, &paused.transcript)?;
    same("handler runs", &straight.log, &paused.log)?;
    same("call records", &straight.records, &paused.records)?;
    same("events", &straight.events, &paused.events)?;
    Ok(())
}

/// What the property covered.
#[derive(Debug, Default)]
struct Coverage {
    scripts: usize,
    with_points: usize,
    variants: usize,
    pauses: usize,
    ends: BTreeMap<String, usize>,
}

/// Checks H7 on the scripts of `seeds`: the failures, described.
async fn check(seeds: impl Iterator<Item = u64>, coverage: &mut Coverage) -> Vec<String> {
    let mut failures = Vec::new();
    for seed in seeds {
        let script = generate(seed);
        coverage.scripts += 1;
        let straight = match observe(&script, BTreeSet::new(), false).await {
            Ok(seen) => seen,
            Err(e) => {
                failures.push(format!("seed {seed}: the straight run: {e}\n{script:#?}"));
                continue;
            }
        };
        let key = match &straight.end {
            Some(End::Answer { stopped_at, .. }) => match stopped_at {
                Some(_) => "stopped".to_owned(),
                None => "answer".to_owned(),
            },
            Some(End::Error { kind, .. }) => format!("{kind:?}"),
            None => "none".to_owned(),
        };
        *coverage.ends.entry(key).or_default() += 1;
        let variants = variants(&script);
        coverage.with_points += usize::from(!variants.is_empty());
        for (label, approvals) in variants {
            coverage.variants += 1;
            let result = match observe(&script, approvals.clone(), true).await {
                Ok(paused) => {
                    coverage.pauses += paused.pauses;
                    compare(&straight, &paused)
                }
                Err(e) => Err(e),
            };
            if let Err(e) = result {
                failures.push(format!(
                    "seed {seed}, variant `{label}` (approval for {approvals:?}): {e}\n\
                     script: {script:#?}\n\
                     rerun: H7_SEED={seed} cargo test -p tool-runtime --test pause_property_h7"
                ));
                break;
            }
        }
    }
    failures
}

/// How many scripts the property runs: `H7_SCRIPTS`, else 2000 (four tests of 500).
fn scripts() -> u64 {
    std::env::var("H7_SCRIPTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2000)
}

/// Runs the `part`-th quarter of the seeds (or only `H7_SEED` in the first part).
async fn property(part: u64) {
    let seeds: Vec<u64> = match std::env::var("H7_SEED").ok().and_then(|s| s.parse().ok()) {
        Some(seed) if part == 0 => vec![seed],
        Some(_) => Vec::new(),
        None => {
            let total = scripts();
            let per = total.div_ceil(4);
            (part * per..((part + 1) * per).min(total)).collect()
        }
    };
    let started = std::time::Instant::now();
    let mut coverage = Coverage::default();
    let failures = check(seeds.into_iter(), &mut coverage).await;
    eprintln!("h7 part {part}: {coverage:?} in {:.1?}", started.elapsed());
    if !failures.is_empty() {
        let mut report = format!("{} scripts differ with a pause (H7):\n", failures.len());
        for failure in &failures {
            let _ = writeln!(report, "- {}", failure.lines().next().unwrap_or_default());
        }
        let _ = writeln!(report, "\nThe first in full:\n{}", failures[0]);
        panic!("{report}");
    }
}

#[tokio::test]
async fn h7_property_a_paused_run_is_the_same_run_part_0() {
    property(0).await;
}

#[tokio::test]
async fn h7_property_a_paused_run_is_the_same_run_part_1() {
    property(1).await;
}

#[tokio::test]
async fn h7_property_a_paused_run_is_the_same_run_part_2() {
    property(2).await;
}

#[tokio::test]
async fn h7_property_a_paused_run_is_the_same_run_part_3() {
    property(3).await;
}

// ─── Targeted tests ──────────────────────────────────────────────────────────────────────────

/// An agent of the targeted tests: the property's tools, `ship` deferred, the `gate` calls
/// `approvals` needing approval.
fn fixture(config: &Config, model: ScriptedModel, approvals: &[&str], log: &Log) -> Agent {
    let approvals = Arc::new(approvals.iter().map(|id| (*id).to_owned()).collect());
    agent(config, model, tools(config, log, &approvals, true))
}

fn gate(id: &str) -> ScriptedTurn {
    ScriptedTurn::new()
        .call(id, "gate", r#"{"target":"db"}"#)
        .usage(10, 5)
}

fn echo(id: &str) -> ScriptedTurn {
    ScriptedTurn::new()
        .call(id, "echo", r#"{"n":1}"#)
        .usage(10, 5)
}

/// `error`'s paused run, through JSON and back.
fn through_json(error: RunError) -> PausedRun {
    assert_eq!(error.kind(), ErrorKind::Paused, "{error:#}");
    let paused = error.into_paused().expect("a paused run");
    let text = paused.to_json().expect("serializes");
    PausedRun::from_json(&text).expect("reads back")
}

fn runs(log: &Log) -> Vec<String> {
    log.lock().expect("not poisoned").clone()
}

#[tokio::test]
async fn h7_a_request_limit_counts_the_requests_made_before_the_pause() {
    let config = Config {
        options: RunOptions::new().limits(UsageLimits::new().requests(2)),
        ..Config::default()
    };
    let log = Log::default();
    let first = ScriptedModel::new([gate("c1")]);
    let error = fixture(&config, first.clone(), &["c1"], &log)
        .execute(
            &Context::new(),
            RunRequest::new(INPUT).options(config.options.clone()),
        )
        .await
        .unwrap_err();
    let second = ScriptedModel::new([echo("c2"), echo("c3"), ScriptedTurn::reply("done")]);
    let error = fixture(&config, second.clone(), &["c1"], &log)
        .resume(
            &Context::new(),
            through_json(error),
            Decisions::new().approve("c1"),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::UsageLimit, "{error:#}");
    assert_eq!(first.request_count() + second.request_count(), 2);
    assert_eq!(error.usage().len(), 2);
    assert_eq!(runs(&log), ["c1 gate db", r#"c2 echo {"n":1}"#]);
}

#[tokio::test]
async fn h7_an_agent_tool_call_limit_counts_the_calls_made_before_the_pause() {
    let config = Config {
        options: RunOptions::new().limits(UsageLimits::new().tool_calls(4)),
        options_on_agent: true,
        ..Config::default()
    };
    let log = Log::default();
    let turn = ScriptedTurn::new()
        .call("c1", "echo", r#"{"n":1}"#)
        .call("c2", "window", r#"{"days":3}"#)
        .call("c3", "gate", r#"{"target":"db"}"#);
    let error = fixture(&config, ScriptedModel::new([turn]), &["c3"], &log)
        .run(&Context::new(), INPUT)
        .await
        .unwrap_err();
    let paused = through_json(error);
    assert_eq!(paused.calls_made(), 3, "the pending call counts");
    let turn =
        ScriptedTurn::new()
            .call("c4", "echo", r#"{"n":4}"#)
            .call("c5", "echo", r#"{"n":5}"#);
    let model = ScriptedModel::new([turn, ScriptedTurn::reply("done")]);
    let error = fixture(&config, model.clone(), &["c3"], &log)
        .resume(&Context::new(), paused, Decisions::new().approve("c3"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::UsageLimit, "{error:#}");
    assert!(
        error.message().contains("4 tool calls (3 made, 2 more"),
        "{error:#}"
    );
    assert_eq!(model.request_count(), 1);
    let mut ran = runs(&log);
    ran.sort();
    assert_eq!(ran, [r#"c1 echo {"n":1}"#, "c2 window 3", "c3 gate db"]);
}

#[tokio::test]
async fn h7_a_tools_failures_in_a_row_count_across_the_pause_with_the_paused_turns() {
    // A budget of 1: the second invalid call of `window` ends the run. Each bad turn also
    // holds a call that waits for approval.
    let config = Config {
        window_retries: 1,
        ..Config::default()
    };
    let bad = |n: usize| {
        ScriptedTurn::new()
            .call(format!("w{n}"), "window", r#"{"days":99}"#)
            .call(format!("g{n}"), "gate", r#"{"target":"db"}"#)
    };
    let log = Log::default();
    let approvals = ["g1", "g2"];
    let error = fixture(&config, ScriptedModel::new([bad(1)]), &approvals, &log)
        .run(&Context::new(), INPUT)
        .await
        .unwrap_err();
    let error = fixture(&config, ScriptedModel::new([bad(2)]), &approvals, &log)
        .resume(
            &Context::new(),
            through_json(error),
            Decisions::new().approve("g1"),
        )
        .await
        .unwrap_err();
    let last = ScriptedModel::new([ScriptedTurn::reply("never")]);
    let error = fixture(&config, last.clone(), &approvals, &log)
        .resume(
            &Context::new(),
            through_json(error),
            Decisions::new().approve("g2"),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::RetriesExhausted, "{error:#}");
    assert_eq!(
        (error.tool(), error.call_id()),
        (Some("window"), Some("w2"))
    );
    assert_eq!(error.violations().len(), 1);
    assert_eq!(last.request_count(), 0, "no third request");
    assert_eq!(runs(&log), ["g1 gate db", "g2 gate db"]);
    // The same script straight through ends the same way.
    let straight = fixture(
        &config,
        ScriptedModel::new([bad(1), bad(2)]),
        &[],
        &Log::default(),
    )
    .run(&Context::new(), INPUT)
    .await
    .unwrap_err();
    assert_eq!(
        (straight.kind(), straight.call_id()),
        (ErrorKind::RetriesExhausted, Some("w2"))
    );
}

#[tokio::test]
async fn h7_a_stopping_tool_that_succeeds_in_the_paused_turn_stops_the_resumed_run() {
    for (stop, text) in [("echo", r#"{"n":1}"#), ("gate", "db opened")] {
        let config = Config {
            options: RunOptions::new().stop_at(stop),
            ..Config::default()
        };
        let log = Log::default();
        let turn = ScriptedTurn::new().call("c1", "echo", r#"{"n":1}"#).call(
            "c2",
            "gate",
            r#"{"target":"db"}"#,
        );
        let error = fixture(&config, ScriptedModel::new([turn]), &["c2"], &log)
            .execute(
                &Context::new(),
                RunRequest::new(INPUT).options(config.options.clone()),
            )
            .await
            .unwrap_err();
        let model = ScriptedModel::new([ScriptedTurn::reply("never")]);
        let out = fixture(&config, model.clone(), &["c2"], &log)
            .resume(
                &Context::new(),
                through_json(error),
                Decisions::new().approve("c2"),
            )
            .await
            .unwrap();
        assert_eq!(out.stopped_at.as_deref(), Some(stop));
        assert_eq!(out.text, text);
        assert_eq!(model.request_count(), 0, "no request after the stop");
        assert_eq!(out.turns(), 1);
        assert_eq!(runs(&log).len(), 2, "both calls ran");
    }
}

#[tokio::test]
async fn h7_a_forced_tool_choice_is_not_sent_again_after_the_resume() {
    for choice in [ToolChoice::Required, ToolChoice::Tool("gate".to_owned())] {
        let config = Config {
            options: RunOptions::new().tool_choice(choice.clone()),
            ..Config::default()
        };
        let log = Log::default();
        let first = ScriptedModel::new([gate("c1")]);
        let error = fixture(&config, first.clone(), &["c1"], &log)
            .execute(
                &Context::new(),
                RunRequest::new(INPUT).options(config.options.clone()),
            )
            .await
            .unwrap_err();
        let second = ScriptedModel::new([echo("c2"), ScriptedTurn::reply("done")]);
        let out = fixture(&config, second.clone(), &["c1"], &log)
            .resume(
                &Context::new(),
                through_json(error),
                Decisions::new().approve("c1"),
            )
            .await
            .unwrap();
        assert_eq!(out.text, "done");
        assert_eq!(first.requests()[0].tool_choice, Some(choice));
        let sent: Vec<_> = second
            .requests()
            .into_iter()
            .map(|r| r.tool_choice)
            .collect();
        assert_eq!(sent, [None, None], "spent by the first request");
    }
}

/// Another answer type: another schema.
#[derive(Schema, Debug)]
pub struct OtherAnswer {
    /// A city.
    pub city: String,
}

#[tokio::test]
async fn h7_a_typed_run_that_pauses_resumes_typed_and_only_typed() {
    let config = Config::default();
    let log = Log::default();
    let error = fixture(&config, ScriptedModel::new([gate("c1")]), &["c1"], &log)
        .execute(&Context::new(), RunRequest::new(INPUT).typed::<Answer>())
        .await
        .unwrap_err();
    let paused = through_json(error);
    assert!(paused.wants_typed_answer());
    let answer = || {
        ScriptedModel::new([ScriptedTurn::new().call(
            "a1",
            "final_answer",
            r#"{"city":"oslo","count":2}"#,
        )])
    };
    let agent = fixture(&config, answer(), &["c1"], &log);
    let refused = agent
        .resume(
            &Context::new(),
            paused.clone(),
            Decisions::new().approve("c1"),
        )
        .await
        .unwrap_err();
    assert_eq!(
        refused.resume_error(),
        Some(&ResumeError::AnswerMismatch { wanted: true })
    );
    let other = agent
        .execute(
            &Context::new(),
            RunRequest::resume(paused.clone(), Decisions::new().approve("c1"))
                .typed::<OtherAnswer>(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        other.resume_error(),
        Some(&ResumeError::AnswerMismatch { wanted: true })
    );
    assert!(runs(&log).is_empty(), "nothing ran");
    let typed = agent
        .execute(
            &Context::new(),
            RunRequest::resume(paused, Decisions::new().approve("c1")).typed::<Answer>(),
        )
        .await
        .unwrap();
    assert_eq!((typed.value.city.as_str(), typed.value.count), ("oslo", 2));
    assert_eq!(runs(&log), ["c1 gate db"]);
    // A run that wants no typed answer is not resumed typed.
    let error = fixture(&config, ScriptedModel::new([gate("c1")]), &["c1"], &log)
        .run(&Context::new(), INPUT)
        .await
        .unwrap_err();
    let refused = fixture(&config, answer(), &["c1"], &log)
        .execute(
            &Context::new(),
            RunRequest::resume(through_json(error), Decisions::new().approve("c1"))
                .typed::<Answer>(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        refused.resume_error(),
        Some(&ResumeError::AnswerMismatch { wanted: false })
    );
}

#[tokio::test]
async fn h7_resume_options_tighten_the_limits_and_never_loosen_them() {
    let config = Config {
        options: RunOptions::new().limits(UsageLimits::new().requests(3)),
        ..Config::default()
    };
    let log = Log::default();
    let error = fixture(&config, ScriptedModel::new([gate("c1")]), &["c1"], &log)
        .execute(
            &Context::new(),
            RunRequest::new(INPUT).options(config.options.clone()),
        )
        .await
        .unwrap_err();
    let paused = through_json(error);
    let cases = [
        // Looser: the run's own limit holds, 3 requests in all.
        (UsageLimits::new().requests(10), 2),
        // Tighter: 2 in all.
        (UsageLimits::new().requests(2), 1),
        // A limit the run did not have: one call more than the one it made.
        (UsageLimits::new().tool_calls(1), 1),
    ];
    for (limits, requests) in cases {
        let model = ScriptedModel::new([
            echo("c2"),
            echo("c3"),
            echo("c4"),
            ScriptedTurn::reply("done"),
        ]);
        let error = fixture(&config, model.clone(), &["c1"], &log)
            .execute(
                &Context::new(),
                RunRequest::resume(paused.clone(), Decisions::new().approve("c1"))
                    .resume_options(ResumeOptions::new().limits(limits)),
            )
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::UsageLimit, "{limits:?}: {error:#}");
        assert_eq!(model.request_count(), requests, "{limits:?}");
    }
    assert_eq!(
        paused.options().usage_limits(),
        &UsageLimits::new().requests(3),
        "the paused run keeps its own"
    );
}

#[tokio::test]
async fn h7_h9_a_memory_ledger_refuses_the_second_resume_of_one_pause() {
    let config = Config::default();
    let log = Log::default();
    let error = fixture(&config, ScriptedModel::new([gate("c1")]), &["c1"], &log)
        .run(&Context::new(), INPUT)
        .await
        .unwrap_err();
    let paused = through_json(error);
    let ledger: Arc<dyn tool_runtime::PauseLedger> = Arc::new(MemoryLedger::new());
    let model = ScriptedModel::new([ScriptedTurn::reply("done"), ScriptedTurn::reply("again")]);
    let agent = fixture(&config, model.clone(), &["c1"], &log);
    let ctx = Context::new();
    let resume = |paused: PausedRun| {
        agent.execute(
            &ctx,
            RunRequest::resume(paused, Decisions::new().approve("c1"))
                .resume_options(ResumeOptions::new().shared_ledger(Arc::clone(&ledger))),
        )
    };
    assert_eq!(resume(paused.clone()).await.unwrap().text, "done");
    let again = resume(paused.clone()).await.unwrap_err();
    assert_eq!(
        again.resume_error(),
        Some(&ResumeError::Replayed {
            run_id: paused.run_id().to_owned(),
            pause_id: paused.pause_id().to_owned(),
        })
    );
    assert_eq!(runs(&log), ["c1 gate db"], "the handler ran once");
    assert_eq!(model.request_count(), 1);
}

#[tokio::test]
async fn h7_a_decision_for_an_unknown_id_names_that_id() {
    let config = Config::default();
    let log = Log::default();
    let error = fixture(&config, ScriptedModel::new([gate("c1")]), &["c1"], &log)
        .run(&Context::new(), INPUT)
        .await
        .unwrap_err();
    let paused = through_json(error);
    let agent = fixture(
        &config,
        ScriptedModel::new([ScriptedTurn::reply("done")]),
        &[],
        &log,
    );
    for decisions in [
        Decisions::new().approve("d2"),
        Decisions::new().approve("c1").approve("d2"),
    ] {
        let refused = agent
            .resume(&Context::new(), paused.clone(), decisions)
            .await
            .unwrap_err();
        assert_eq!(
            refused.resume_error(),
            Some(&ResumeError::UnknownCall {
                call_id: "d2".to_owned()
            })
        );
    }
    assert!(runs(&log).is_empty());
}

#[tokio::test]
async fn h7_a_typed_answer_out_of_retries_through_the_final_answer_tool_names_its_call() {
    let config = Config {
        agent_retries: 1,
        ..Config::default()
    };
    let bad = |n: usize| {
        ScriptedTurn::new().call(
            format!("a{n}"),
            "final_answer",
            r#"{"city":"Paris","count":0}"#,
        )
    };
    // Straight through.
    let log = Log::default();
    let error = fixture(&config, ScriptedModel::new([bad(1), bad(2)]), &[], &log)
        .execute(&Context::new(), RunRequest::new(INPUT).typed::<Answer>())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::RetriesExhausted, "{error:#}");
    assert_eq!(
        (error.tool(), error.call_id()),
        (Some("final_answer"), Some("a2"))
    );
    assert_eq!(error.violations().len(), 2);
    // With a pause in the turn of the first bad answer.
    let first = bad(1).call("c1", "gate", r#"{"target":"db"}"#);
    let error = fixture(&config, ScriptedModel::new([first]), &["c1"], &log)
        .execute(&Context::new(), RunRequest::new(INPUT).typed::<Answer>())
        .await
        .unwrap_err();
    let error = fixture(&config, ScriptedModel::new([bad(2)]), &["c1"], &log)
        .execute(
            &Context::new(),
            RunRequest::resume(through_json(error), Decisions::new().approve("c1"))
                .typed::<Answer>(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::RetriesExhausted, "{error:#}");
    assert_eq!(
        (error.tool(), error.call_id()),
        (Some("final_answer"), Some("a2"))
    );
}

#[tokio::test]
async fn h7_a_turn_with_a_rejected_answer_that_ends_the_run_keeps_the_answers_result() {
    // The answer does not fit and goes back to the model; a sibling call puts its tool past
    // its budget (0), which ends the run: the transcript still answers every call of the
    // turn, in the model's order, straight through and with a pause in that turn.
    let config = Config {
        window_retries: 0,
        ..Config::default()
    };
    let turn = |gate: bool| {
        let turn = ScriptedTurn::new()
            .call("w1", "window", r#"{"days":99}"#)
            .call("a1", "final_answer", r#"{"city":"Paris","count":0}"#);
        if gate {
            turn.call("g1", "gate", r#"{"target":"db"}"#)
        } else {
            turn
        }
    };
    let ids = |transcript: &[Message]| -> Vec<String> {
        transcript
            .iter()
            .filter_map(Message::tool_result)
            .map(|r| r.call_id.to_string())
            .collect()
    };
    let log = Log::default();
    let straight = fixture(&config, ScriptedModel::new([turn(false)]), &[], &log)
        .execute(&Context::new(), RunRequest::new(INPUT).typed::<Answer>())
        .await
        .unwrap_err();
    assert_eq!(straight.kind(), ErrorKind::RetriesExhausted, "{straight:#}");
    assert_eq!(ids(straight.transcript()), ["w1", "a1"]);
    let error = fixture(&config, ScriptedModel::new([turn(true)]), &["g1"], &log)
        .execute(&Context::new(), RunRequest::new(INPUT).typed::<Answer>())
        .await
        .unwrap_err();
    let resumed = fixture(&config, ScriptedModel::new([]), &["g1"], &log)
        .execute(
            &Context::new(),
            RunRequest::resume(through_json(error), Decisions::new().approve("g1"))
                .typed::<Answer>(),
        )
        .await
        .unwrap_err();
    assert_eq!(resumed.kind(), ErrorKind::RetriesExhausted, "{resumed:#}");
    assert_eq!(ids(resumed.transcript()), ["w1", "a1", "g1"]);
}

#[test]
fn h7_the_trace_context_goes_on_across_the_pauses() {
    // The spans are recorded in a process of their own: a callsite first reached by a
    // concurrent test of this binary, with no subscriber, could be cached as uninteresting.
    const CHILD: &str = "H7_TRACE_CONTEXT_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(trace_context_goes_on());
        return;
    }
    let name = "h7_the_trace_context_goes_on_across_the_pauses";
    let output = std::process::Command::new(std::env::current_exe().expect("this test"))
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("the child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "the child failed:\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// K2, H9: every segment of a run is a run span with the run's id as its conversation id, and
/// its requests are numbered on from the turns before the pause.
async fn trace_context_goes_on() {
    let spans = Spans::default();
    let _guard = spans.install();
    let config = Config::default();
    let log = Log::default();
    let approvals = ["c1", "c2"];
    let error = fixture(&config, ScriptedModel::new([gate("c1")]), &approvals, &log)
        .run(&Context::new(), INPUT)
        .await
        .expect_err("pauses");
    let first = through_json(error);
    let error = fixture(&config, ScriptedModel::new([gate("c2")]), &approvals, &log)
        .resume(
            &Context::new(),
            first.clone(),
            Decisions::new().approve("c1"),
        )
        .await
        .expect_err("pauses again");
    let second = through_json(error);
    assert_eq!(second.run_id(), first.run_id());
    assert_ne!(second.pause_id(), first.pause_id());
    let model = ScriptedModel::new([echo("c3"), ScriptedTurn::reply("done")]);
    let out = fixture(&config, model, &approvals, &log)
        .resume(&Context::new(), second, Decisions::new().approve("c2"))
        .await
        .expect("answers");
    assert_eq!(out.turns(), 4);
    let runs = spans.named("invoke_agent");
    let ids: Vec<&str> = runs
        .iter()
        .map(|s| s.field("gen_ai.conversation.id"))
        .collect();
    assert_eq!(ids, [first.run_id(); 3]);
    let turns: Vec<String> = spans
        .named("chat")
        .iter()
        .map(|s| s.field("tool_runtime.turn").to_owned())
        .collect();
    assert_eq!(turns, ["1", "2", "3", "4"]);
    assert_eq!(runs[2].field("tool_runtime.turns"), "4");
}
