//! Adversarial runs: generated scripts for the scripted model, each turn a batch of
//! hostile calls (unknown and hidden names, bad JSON, wrong types, duplicate keys, huge
//! arguments, errors that wrap secrets, panics, permanent failures, failing policies, a sibling
//! that turns its cancellation into a failure of its own) or a final reply (whole, or cut off
//! at the output token limit). For every run the test asserts that no planted secret reaches
//! anything the model is sent (E2, E4, A6, P1, S5) while the application keeps it (E3), that
//! every call ends with the kind and the model-facing text an independent oracle computes from
//! the script (A4, A5, S2, S3), and that the run ends with the right kind (P3, R3).
//!
//! The cases come from a fixed seed, so CI runs the same ones every time. To explore others,
//! set `ADVERSARIAL_SEED` (a u64) and `ADVERSARIAL_CASES`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::fmt;
use std::io;
use std::sync::Once;
use std::time::Duration;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use tool_runtime::schema::Invalid;
use tool_runtime::{
    Agent, CANCELLED, CallRecord, Context, ErrorKind, FAILED, FinishReason, Limits, Message,
    OutcomeKind, Permanent, RecordedRequest, RunError, RunOutput, Schema, ScriptedModel,
    ScriptedTurn, Tool, ToolError, UNAVAILABLE,
};

/// Arguments of any shape (an object root).
type Args = BTreeMap<String, serde_json::Value>;

/// The largest arguments a generated run's agent accepts; `Broken::Huge` goes past it.
const LIMIT: usize = 4096;
/// What the model is told of arguments that broke the schema starts with this (S2).
const INVALID_PREFIX: &str = "invalid arguments:";
/// Every planted secret starts with this; nothing the generator writes for the model does.
const SECRET_MARK: &str = "SECRET";
/// The secret of the custom validator's operational error (S5): a plain `fn` captures nothing,
/// so it is the same in every run.
const VALIDATOR_SECRET: &str = "SECRET-validator-lookup-db-password-hunter2";
/// The instructions of every generated run's agent.
const INSTRUCTIONS: &str = "You are probed by an adversarial script.";

// ---------------------------------------------------------------------------------------------
// The tools every generated run's agent holds.
// ---------------------------------------------------------------------------------------------

/// Input of `echo`: typed, constrained, so that misfit arguments are violations (S2, S4).
#[derive(Schema, Debug)]
struct EchoInput {
    /// Any short text.
    #[schema(max_len = 64)]
    text: String,
    /// A small number.
    #[schema(range = 0..=100)]
    n: u32,
}

/// Input of `checked`: its validator rejects `bad` (a violation) and fails on `boom` (an
/// operational error holding a secret, S5).
#[derive(Schema, Debug)]
struct CheckedInput {
    /// A code to check.
    #[schema(validate = check_code)]
    code: String,
}

fn check_code(code: &str) -> Result<(), Invalid> {
    match code {
        "bad" => Err(Invalid::violation("the code must not be `bad`")),
        "boom" => Err(Invalid::error(io::Error::other(VALIDATOR_SECRET))),
        _ => Ok(()),
    }
}

/// An application error that holds a secret and wraps text approved for the model (E2, A6).
#[derive(Debug)]
struct Wrapped {
    secret: String,
    approved: ToolError,
}

impl fmt::Display for Wrapped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the backend refused: {}", self.secret)
    }
}

impl std::error::Error for Wrapped {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.approved)
    }
}

/// A tool of the agent, in declaration order (see [`HELD`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Held {
    /// Typed input, no policy: echoes its input.
    Echo,
    /// A policy that allows every time: the A4 re-check passes.
    Gated,
    /// Allowed at discovery, denied at call time: A4, `tool unavailable`.
    Revoked,
    /// Denied at discovery: A5, `tool unavailable`.
    Hidden,
    /// Denied at discovery; its policy panics with a secret if consulted later. A5: a hidden
    /// tool's policy is not consulted, the answer is `tool unavailable`.
    Flip,
    /// Fails with a plain error whose message is a secret: E2, `the tool failed`.
    Fails,
    /// Fails with a bare `ToolError`: E2, its text.
    Refuses,
    /// Fails with a secret error whose source is a `ToolError`: E2, only the `ToolError`'s text.
    Wraps,
    /// The same, two `anyhow` contexts deep.
    WrapsDeep,
    /// Typed input with a validator that may fail operationally with a secret (S5).
    Checked,
    /// Returns `Permanent` wrapping a secret: P1, ends the run.
    Permanent,
    /// Returns `Permanent` wrapping a `ToolError` whose text is a secret: the model reads
    /// nothing of a permanent failure (`Permanent`'s contract), only `the tool failed`.
    PermanentApproved,
    /// Its handler's future panics with a secret: E4, kind `Panic`.
    Panics,
    /// Its handler panics with a secret before it returns a future: E4, kind `Panic`.
    PanicsEarly,
    /// Allowed at discovery; at call time its policy fails with a secret that wraps a
    /// `ToolError` holding another: A6, kind `Availability`, permanent, nothing shown.
    PolicyFails,
    /// Allowed at discovery; at call time its policy panics with a secret: E4, kind `Panic`.
    PolicyPanics,
    /// Waits (an hour, of paused time) for the turn's cancellation, and turns it into a
    /// `Permanent` failure with a secret: the run must still return the initiating failure (P3).
    Sulks,
}

const HELD: [Held; 17] = [
    Held::Echo,
    Held::Gated,
    Held::Revoked,
    Held::Hidden,
    Held::Flip,
    Held::Fails,
    Held::Refuses,
    Held::Wraps,
    Held::WrapsDeep,
    Held::Checked,
    Held::Permanent,
    Held::PermanentApproved,
    Held::Panics,
    Held::PanicsEarly,
    Held::PolicyFails,
    Held::PolicyPanics,
    Held::Sulks,
];

/// What a tool's input accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InputShape {
    Echo,
    Checked,
    AnyObject,
}

impl Held {
    fn name(self) -> &'static str {
        match self {
            Held::Echo => "echo",
            Held::Gated => "gated",
            Held::Revoked => "revoked",
            Held::Hidden => "hidden",
            Held::Flip => "flip",
            Held::Fails => "fails",
            Held::Refuses => "refuses",
            Held::Wraps => "wraps",
            Held::WrapsDeep => "wraps-deep",
            Held::Checked => "checked",
            Held::Permanent => "permanent",
            Held::PermanentApproved => "permanent-approved",
            Held::Panics => "panics",
            Held::PanicsEarly => "panics-early",
            Held::PolicyFails => "policy-fails",
            Held::PolicyPanics => "policy-panics",
            Held::Sulks => "sulks",
        }
    }

    /// Whether discovery shows it (A2).
    fn advertised(self) -> bool {
        !matches!(self, Held::Hidden | Held::Flip)
    }

    fn input(self) -> InputShape {
        match self {
            Held::Echo => InputShape::Echo,
            Held::Checked => InputShape::Checked,
            _ => InputShape::AnyObject,
        }
    }

    /// Whether a call of it plants a secret somewhere (an error, a panic, a policy).
    fn plants_secret(self) -> bool {
        matches!(
            self,
            Held::Flip
                | Held::Fails
                | Held::Wraps
                | Held::WrapsDeep
                | Held::Permanent
                | Held::PermanentApproved
                | Held::Panics
                | Held::PanicsEarly
                | Held::PolicyFails
                | Held::PolicyPanics
                | Held::Sulks
        )
    }
}

/// The secret a call of `tool` with id `call_id` plants in run `nonce`: distinct per run, tool
/// and call.
fn secret(nonce: u64, tool: &str, call_id: &str) -> String {
    format!("{SECRET_MARK}-{nonce:016x}-{tool}-{call_id}")
}

/// The text a `ToolError` approves for the model in call `call_id`.
fn approved(call_id: &str) -> String {
    format!("approved: nothing is scheduled for {call_id}")
}

fn call_id_of(ctx: &Context) -> String {
    ctx.call().map(|c| c.id.to_string()).unwrap_or_default()
}

fn ok_handler(
    text: &'static str,
) -> impl Fn(Context, Args) -> std::future::Ready<Result<String, Infallible>> + Send + Sync + 'static
{
    move |_ctx: Context, _args: Args| std::future::ready(Ok(text.to_owned()))
}

/// The tool `held`, planting secrets made with `nonce`.
fn build(held: Held, nonce: u64) -> Tool {
    let name = held.name();
    let builder = Tool::builder(name, format!("The {name} tool."));
    let secret_of = move |ctx: &Context| secret(nonce, name, &call_id_of(ctx));
    match held {
        Held::Echo => builder
            .handler(|_ctx: Context, input: EchoInput| async move {
                Ok::<_, Infallible>(format!("echo:{}:{}", input.text, input.n))
            })
            .build(),
        Held::Gated => builder
            .handler(ok_handler("gated"))
            .available_fn(|_ctx: &Context| Ok::<_, io::Error>(true))
            .build(),
        Held::Revoked => builder
            .handler(ok_handler("revoked ran"))
            .available_fn(|ctx: &Context| Ok::<_, io::Error>(ctx.call().is_none()))
            .build(),
        Held::Hidden => builder
            .handler(ok_handler("hidden ran"))
            .available_fn(|_ctx: &Context| Ok::<_, io::Error>(false))
            .build(),
        Held::Flip => builder
            .handler(ok_handler("flip ran"))
            .available_fn(move |ctx: &Context| -> Result<bool, io::Error> {
                if ctx.call().is_some() {
                    panic!("{}", secret_of(ctx));
                }
                Ok(false)
            })
            .build(),
        Held::Fails => builder
            .handler(move |ctx: Context, _args: Args| {
                let secret = secret_of(&ctx);
                async move { Err::<String, _>(io::Error::other(secret)) }
            })
            .build(),
        Held::Refuses => builder
            .handler(|ctx: Context, _args: Args| {
                let text = approved(&call_id_of(&ctx));
                async move { Err::<String, _>(ToolError::new(text)) }
            })
            .build(),
        Held::Wraps => builder
            .handler(move |ctx: Context, _args: Args| {
                let error = Wrapped {
                    secret: secret_of(&ctx),
                    approved: ToolError::new(approved(&call_id_of(&ctx))),
                };
                async move { Err::<String, _>(error) }
            })
            .build(),
        Held::WrapsDeep => builder
            .handler(move |ctx: Context, _args: Args| {
                let secret = secret_of(&ctx);
                let error = anyhow::Error::new(ToolError::new(approved(&call_id_of(&ctx))))
                    .context(format!("the lookup failed: {secret}"))
                    .context(format!("while serving {secret}"));
                async move { Err::<String, _>(error) }
            })
            .build(),
        Held::Checked => builder
            .handler(|_ctx: Context, input: CheckedInput| async move {
                Ok::<_, Infallible>(format!("checked:{}", input.code))
            })
            .build(),
        Held::Permanent => builder
            .handler(move |ctx: Context, _args: Args| {
                let secret = secret_of(&ctx);
                async move { Err::<String, _>(Permanent::new(io::Error::other(secret))) }
            })
            .build(),
        Held::PermanentApproved => builder
            .handler(move |ctx: Context, _args: Args| {
                let secret = secret_of(&ctx);
                async move { Err::<String, _>(Permanent::new(ToolError::new(secret))) }
            })
            .build(),
        Held::Panics => builder
            .handler(move |ctx: Context, _args: Args| {
                let secret = secret_of(&ctx);
                async move {
                    if !secret.is_empty() {
                        panic!("{secret}");
                    }
                    Ok::<String, io::Error>(secret)
                }
            })
            .build(),
        Held::PanicsEarly => builder
            .handler(move |ctx: Context, _args: Args| {
                let secret = secret_of(&ctx);
                if !secret.is_empty() {
                    panic!("{secret}");
                }
                async move { Ok::<String, io::Error>(secret) }
            })
            .build(),
        Held::PolicyFails => builder
            .handler(ok_handler("policy-fails ran"))
            .available_fn(move |ctx: &Context| -> Result<bool, Wrapped> {
                if ctx.call().is_none() {
                    return Ok(true);
                }
                let secret = secret_of(ctx);
                Err(Wrapped {
                    approved: ToolError::new(format!("{secret}-in-the-tool-error")),
                    secret,
                })
            })
            .build(),
        Held::PolicyPanics => builder
            .handler(ok_handler("policy-panics ran"))
            .available_fn(move |ctx: &Context| -> Result<bool, io::Error> {
                if ctx.call().is_some() {
                    panic!("{}", secret_of(ctx));
                }
                Ok(true)
            })
            .build(),
        Held::Sulks => builder
            .handler(move |ctx: Context, _args: Args| {
                let secret = secret_of(&ctx);
                async move {
                    tokio::select! {
                        () = ctx.cancelled() => Err(Permanent::new(io::Error::other(secret))),
                        () = tokio::time::sleep(Duration::from_secs(3600)) => {
                            Ok("patience".to_owned())
                        }
                    }
                }
            })
            .build(),
    }
}

// ---------------------------------------------------------------------------------------------
// Scripts.
// ---------------------------------------------------------------------------------------------

/// What `checked`'s validator is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
    Fine,
    Bad,
    Boom,
}

/// The raw arguments of a call, by what they fit.
#[derive(Debug, Clone)]
enum Arguments {
    /// Valid for `echo` (and any object).
    Echo { text: String, n: u32 },
    /// `{"code": …}`: valid for `checked` (and any object), then judged by its validator.
    Code(Code),
    /// Blank arguments, decoded as `{}`: valid for any object, missing fields for typed input.
    Blank(&'static str),
    /// An object that breaks `echo`'s schema: wrong types, out of range, unknown or missing
    /// fields (S2, S4). Valid for any object.
    Misfit(&'static str),
    /// A wrong-typed value 300 characters long: its violation must quote only a piece (S3).
    LongMisfit,
    /// Not an object, not JSON, duplicate keys, too large or too deep: invalid for every tool.
    Broken(Broken),
}

#[derive(Debug, Clone, Copy)]
enum Broken {
    Literal(&'static str),
    Huge,
    Deep,
}

/// The value `LongMisfit` sends; no violation may echo it whole (S3).
fn long_value() -> String {
    "q".repeat(300)
}

const MISFITS: [&str; 10] = [
    r#"{"text": 5, "n": 1}"#,
    r#"{"text": "a", "n": "7"}"#,
    r#"{"text": "a", "n": -1}"#,
    r#"{"text": "a", "n": 101}"#,
    r#"{"text": "a", "n": 1.5}"#,
    r#"{"text": "a"}"#,
    r#"{"text": "a", "n": 1, "extra": true}"#,
    r#"{"text": null, "n": 1}"#,
    r#"{"text": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "n": 1}"#,
    r#"{"n": 4294967296, "text": "a"}"#,
];

const BROKEN: [&str; 13] = [
    "not json",
    "{",
    r#"{"text": }"#,
    "[1, 2",
    r#"{"text": "a", "n": 1} trailing"#,
    r#"{"text": "a", "n": 1}{}"#,
    "[]",
    "42",
    r#""a string""#,
    "true",
    r#"{"text": "a", "text": "b", "n": 1}"#,
    r#"{"code": "ok", "code": "ok"}"#,
    "{'text': 'single quotes', 'n': 1}",
];

impl Arguments {
    fn raw(&self) -> String {
        match self {
            Arguments::Echo { text, n } => serde_json::json!({"text": text, "n": n}).to_string(),
            Arguments::Code(code) => {
                let code = match code {
                    Code::Fine => "ok",
                    Code::Bad => "bad",
                    Code::Boom => "boom",
                };
                serde_json::json!({ "code": code }).to_string()
            }
            Arguments::Blank(raw) | Arguments::Misfit(raw) => (*raw).to_owned(),
            Arguments::LongMisfit => {
                serde_json::json!({"text": 7, "n": long_value(), "extra": long_value()}).to_string()
            }
            Arguments::Broken(Broken::Literal(raw)) => (*raw).to_owned(),
            Arguments::Broken(Broken::Huge) => {
                serde_json::json!({"text": "z".repeat(LIMIT), "n": 1}).to_string()
            }
            Arguments::Broken(Broken::Deep) => {
                format!(r#"{{"a": {}{}}}"#, "[".repeat(200), "]".repeat(200))
            }
        }
    }

    /// Whether a tool whose input is `shape` parses these arguments (S2).
    fn fit(&self, shape: InputShape) -> bool {
        match (self, shape) {
            (Arguments::Broken(_), _) => false,
            (_, InputShape::AnyObject) => true,
            (Arguments::Echo { .. }, InputShape::Echo) => true,
            (Arguments::Code(_), InputShape::Checked) => true,
            _ => false,
        }
    }
}

/// The name a call uses.
#[derive(Debug, Clone)]
enum Target {
    Held(Held),
    /// A name the agent does not hold.
    Unknown(String),
}

impl Target {
    fn name(&self) -> &str {
        match self {
            Target::Held(held) => held.name(),
            Target::Unknown(name) => name,
        }
    }
}

#[derive(Debug, Clone)]
struct Call {
    target: Target,
    arguments: Arguments,
}

#[derive(Debug, Clone)]
enum Turn {
    /// Calls (and some text beside them). With `duplicate_id`, the last call reuses the first
    /// call's id: the reply cannot be a turn (kind `Protocol`).
    Calls {
        text: String,
        calls: Vec<Call>,
        duplicate_id: bool,
    },
    /// A final reply.
    Reply(String),
    /// A final reply cut off at the output token limit.
    CutOff(String),
}

#[derive(Debug, Clone)]
struct Script {
    /// Makes this run's secrets distinct from every other run's.
    nonce: u64,
    max_turns: usize,
    max_concurrency: usize,
    turns: Vec<Turn>,
}

/// The call ids of turn `turn` (from 1).
fn call_ids(turn: usize, count: usize, duplicate_id: bool) -> Vec<String> {
    let mut ids: Vec<String> = (0..count).map(|i| format!("t{turn}c{i}")).collect();
    if duplicate_id && count >= 2 {
        ids[count - 1] = ids[0].clone();
    }
    ids
}

fn scripted(turn: usize, script_turn: &Turn) -> ScriptedTurn {
    match script_turn {
        Turn::Calls {
            text,
            calls,
            duplicate_id,
        } => {
            let ids = call_ids(turn, calls.len(), *duplicate_id);
            calls.iter().zip(ids).fold(
                ScriptedTurn::new().text(text.clone()),
                |scripted, (call, id)| scripted.call(id, call.target.name(), call.arguments.raw()),
            )
        }
        Turn::Reply(text) => ScriptedTurn::reply(text.clone()),
        Turn::CutOff(text) => ScriptedTurn::reply(text.clone()).finish(FinishReason::Length),
    }
}

// ---------------------------------------------------------------------------------------------
// Strategies.
// ---------------------------------------------------------------------------------------------

/// Names the agent does not hold, chosen to look like held ones.
const ODD_NAMES: [&str; 12] = [
    "",
    " ",
    "Echo",
    "ECHO",
    "echo ",
    " echo",
    "echo\n",
    "echo\u{0}",
    "../echo",
    "fails\u{200b}",
    "wraps_deep",
    "💥",
];

fn arb_text() -> impl Strategy<Value = String> {
    // No upper case: nothing the model writes can contain `SECRET`.
    "[a-z0-9 \"\\\\é]{0,20}"
}

fn arb_target() -> impl Strategy<Value = Target> {
    prop_oneof![
        10 => select(HELD.to_vec()).prop_map(Target::Held),
        1 => select(ODD_NAMES.to_vec()).prop_map(|n| Target::Unknown(n.to_owned())),
        1 => "[a-z][a-z0-9-]{0,12}"
            .prop_filter("a name the agent does not hold", |name| {
                HELD.iter().all(|h| h.name() != name)
            })
            .prop_map(Target::Unknown),
        1 => Just(Target::Unknown("x".repeat(300))),
    ]
}

fn arb_arguments() -> impl Strategy<Value = Arguments> {
    prop_oneof![
        5 => (arb_text(), 0..=100u32).prop_map(|(text, n)| Arguments::Echo { text, n }),
        2 => select(vec![Code::Fine, Code::Bad, Code::Boom]).prop_map(Arguments::Code),
        1 => select(vec!["", "  ", "\n\t "]).prop_map(Arguments::Blank),
        2 => select(MISFITS.to_vec()).prop_map(Arguments::Misfit),
        1 => Just(Arguments::LongMisfit),
        2 => select(BROKEN.to_vec()).prop_map(|raw| Arguments::Broken(Broken::Literal(raw))),
        1 => Just(Arguments::Broken(Broken::Huge)),
        1 => Just(Arguments::Broken(Broken::Deep)),
    ]
}

fn arb_call() -> impl Strategy<Value = Call> {
    (arb_target(), arb_arguments()).prop_map(|(target, arguments)| Call { target, arguments })
}

fn arb_turn() -> impl Strategy<Value = Turn> {
    prop_oneof![
        12 => (arb_text(), vec(arb_call(), 1..=6), prop::bool::weighted(0.04)).prop_map(
            |(text, calls, duplicate_id)| Turn::Calls {
                duplicate_id: duplicate_id && calls.len() >= 2,
                text,
                calls,
            }
        ),
        2 => arb_text().prop_map(Turn::Reply),
        1 => arb_text().prop_map(Turn::CutOff),
    ]
}

fn arb_script() -> impl Strategy<Value = Script> {
    (any::<u64>(), 1..=6usize, 1..=4usize, vec(arb_turn(), 0..=6)).prop_map(
        |(nonce, max_turns, max_concurrency, turns)| Script {
            nonce,
            max_turns,
            max_concurrency,
            turns,
        },
    )
}

// ---------------------------------------------------------------------------------------------
// The oracle: what each call and the run must end with, computed from the script alone.
// ---------------------------------------------------------------------------------------------

/// How a call must end, and what the model must read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expect {
    Success(String),
    /// `tool unavailable` (A4, A5).
    Unavailable,
    /// `invalid arguments: …` (S2).
    Invalid,
    /// `the tool failed` (E2, S5).
    Failed,
    /// The `ToolError`'s text and nothing of its wrappers (E2).
    Rejected(String),
    /// Ends the run with this kind; the call's text is `the tool failed` (P1, A6, E4).
    Fatal(ErrorKind),
    /// `sulks`: `patience` when no sibling is fatal; in a fatal turn, also a permanent failure
    /// or a cancellation, but never the run's failure (P3).
    Patient,
}

impl Expect {
    fn kind(&self) -> OutcomeKind {
        match self {
            Expect::Success(_) | Expect::Patient => OutcomeKind::Success,
            Expect::Unavailable => OutcomeKind::Unavailable,
            Expect::Invalid => OutcomeKind::InvalidArguments,
            Expect::Failed => OutcomeKind::Failed,
            Expect::Rejected(_) => OutcomeKind::Rejected,
            Expect::Fatal(_) => OutcomeKind::Fatal,
        }
    }

    /// Whether `text` is what the model must read.
    fn text_fits(&self, text: &str) -> bool {
        match self {
            Expect::Success(expected) | Expect::Rejected(expected) => text == expected,
            Expect::Unavailable => text == UNAVAILABLE,
            Expect::Invalid => text.starts_with(INVALID_PREFIX),
            Expect::Failed | Expect::Fatal(_) => text == FAILED,
            Expect::Patient => text == "patience",
        }
    }

    fn label(&self) -> String {
        match self {
            Expect::Fatal(kind) => format!("call:fatal:{kind}"),
            Expect::Patient => "call:patient".to_owned(),
            other => format!("call:{}", other.kind()),
        }
    }
}

/// What the call `call`, with id `id`, must end with.
fn expect(call: &Call, id: &str) -> Expect {
    let Target::Held(held) = call.target else {
        // A5: a name the agent does not hold.
        return Expect::Unavailable;
    };
    // S2: the handler does not run on arguments that do not parse.
    let fits = call.arguments.fit(held.input());
    match (held, &call.arguments) {
        // A5: not advertised in this run, so not callable, whatever the policy says now (its
        // policy is not even asked: `flip`'s would panic). A4: revoked at the re-check.
        (Held::Hidden | Held::Flip | Held::Revoked, _) => Expect::Unavailable,
        // A4, A6: the re-check comes before decoding, so the arguments do not matter.
        (Held::PolicyFails, _) => Expect::Fatal(ErrorKind::Availability),
        (Held::PolicyPanics, _) => Expect::Fatal(ErrorKind::Panic),
        _ if !fits => Expect::Invalid,
        (Held::Echo, Arguments::Echo { text, n }) => Expect::Success(format!("echo:{text}:{n}")),
        (Held::Checked, Arguments::Code(Code::Fine)) => Expect::Success("checked:ok".to_owned()),
        // S5: a validator's operational error is redacted like a handler failure.
        (Held::Checked, Arguments::Code(Code::Boom)) => Expect::Failed,
        // A validator's violation, or (never reached: `fits` said no) other arguments.
        (Held::Echo | Held::Checked, _) => Expect::Invalid,
        (Held::Gated, _) => Expect::Success("gated".to_owned()),
        (Held::Fails, _) => Expect::Failed,
        (Held::Refuses | Held::Wraps | Held::WrapsDeep, _) => Expect::Rejected(approved(id)),
        (Held::Permanent | Held::PermanentApproved, _) => Expect::Fatal(ErrorKind::Permanent),
        (Held::Panics | Held::PanicsEarly, _) => Expect::Fatal(ErrorKind::Panic),
        (Held::Sulks, _) => Expect::Patient,
    }
}

/// The secret a call plants, if any, for the checks that it stays out of the model's view and
/// in the application's (E3).
fn planted(nonce: u64, call: &Call, id: &str) -> Option<String> {
    match (&call.target, &call.arguments) {
        (Target::Held(Held::Checked), Arguments::Code(Code::Boom)) => {
            Some(VALIDATOR_SECRET.to_owned())
        }
        (Target::Held(held), _) if held.plants_secret() => Some(secret(nonce, held.name(), id)),
        _ => None,
    }
}

/// One call of an executed turn, as the oracle sees it.
#[derive(Debug, Clone)]
struct Planned {
    turn: usize,
    index: usize,
    id: String,
    name: String,
    expect: Expect,
    secret: Option<String>,
}

/// How the run must end.
#[derive(Debug, Clone, PartialEq, Eq)]
enum End {
    /// A final answer with this text (R3).
    Answer(String),
    /// A final reply cut off: kind `Truncated`, keeping the partial text.
    CutOff(String),
    /// A turn with fatal calls (P1, A6, E4): the run ends with the kind of one of them (P3).
    Fatal { turn: usize },
    /// A reply with two calls of one id: kind `Protocol`, and none of its calls runs.
    Protocol { turn: usize },
    /// Past `max_turns` without an answer (R3).
    MaxTurns,
    /// Out of script: the scripted model fails (kind `Model`).
    Exhausted,
}

impl End {
    fn label(&self) -> &'static str {
        match self {
            End::Answer(_) => "end:answer",
            End::CutOff(_) => "end:truncated",
            End::Fatal { .. } => "end:fatal",
            End::Protocol { .. } => "end:protocol",
            End::MaxTurns => "end:max-turns",
            End::Exhausted => "end:model",
        }
    }
}

struct Plan {
    end: End,
    /// How many requests the model receives.
    requests: usize,
    /// Every call that runs, in order (turn, then the model's order).
    calls: Vec<Planned>,
    /// Every secret the script can plant, run or not.
    secrets: Vec<String>,
}

fn plan(script: &Script) -> Plan {
    let mut calls = Vec::new();
    let mut secrets = vec![VALIDATOR_SECRET.to_owned()];
    for (i, script_turn) in script.turns.iter().enumerate() {
        if let Turn::Calls {
            calls: turn_calls,
            duplicate_id,
            ..
        } = script_turn
        {
            let ids = call_ids(i + 1, turn_calls.len(), *duplicate_id);
            for (call, id) in turn_calls.iter().zip(&ids) {
                if let Target::Held(held) = call.target {
                    secrets.push(secret(script.nonce, held.name(), id));
                }
            }
        }
    }
    for (i, script_turn) in script.turns.iter().enumerate() {
        let turn = i + 1;
        if turn > script.max_turns {
            return Plan {
                end: End::MaxTurns,
                requests: script.max_turns,
                calls,
                secrets,
            };
        }
        let end = match script_turn {
            Turn::Reply(text) => End::Answer(text.clone()),
            Turn::CutOff(text) => End::CutOff(text.clone()),
            Turn::Calls { duplicate_id, .. } if *duplicate_id => End::Protocol { turn },
            Turn::Calls {
                calls: turn_calls, ..
            } => {
                let ids = call_ids(turn, turn_calls.len(), false);
                let mut fatal = false;
                for (index, (call, id)) in turn_calls.iter().zip(ids).enumerate() {
                    let expect = expect(call, &id);
                    fatal |= matches!(expect, Expect::Fatal(_));
                    calls.push(Planned {
                        turn,
                        index,
                        secret: planted(script.nonce, call, &id),
                        name: call.target.name().to_owned(),
                        id,
                        expect,
                    });
                }
                if !fatal {
                    continue;
                }
                End::Fatal { turn }
            }
        };
        return Plan {
            end,
            requests: turn,
            calls,
            secrets,
        };
    }
    if script.turns.len() >= script.max_turns {
        Plan {
            end: End::MaxTurns,
            requests: script.max_turns,
            calls,
            secrets,
        }
    } else {
        Plan {
            end: End::Exhausted,
            requests: script.turns.len() + 1,
            calls,
            secrets,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Running a script and checking it.
// ---------------------------------------------------------------------------------------------

/// Everything a request shows the model, as one text: its `Debug` form and each piece walked
/// (instructions, every message's text, calls and results, and every tool spec).
fn sent(request: &RecordedRequest) -> String {
    let mut all = format!("{request:?}\n");
    if let Some(instructions) = &request.instructions {
        all.push_str(instructions);
        all.push('\n');
    }
    push_messages(&mut all, &request.messages);
    for spec in &request.tools {
        for piece in [spec.name(), spec.description(), spec.parameters_json()] {
            all.push_str(piece);
            all.push('\n');
        }
    }
    all
}

fn push_messages(all: &mut String, messages: &[Message]) {
    for message in messages {
        all.push_str(&serde_json::to_string(message).unwrap_or_default());
        all.push('\n');
        all.push_str(message.text());
        all.push('\n');
        for call in message.tool_calls() {
            for piece in [&*call.id, &*call.name, &call.arguments] {
                all.push_str(piece);
                all.push('\n');
            }
        }
        if let Some(result) = message.tool_result() {
            for piece in [&*result.call_id, &*result.name, &result.text] {
                all.push_str(piece);
                all.push('\n');
            }
        }
    }
}

/// Fails if `text` (what the model was, or would be, sent) holds a planted secret, or anything
/// marked as one; the message shows where.
fn assert_no_secret(text: &str, secrets: &[String], what: &str) -> Result<(), TestCaseError> {
    let marks = secrets.iter().map(String::as_str).chain([SECRET_MARK]);
    for mark in marks {
        if let Some(at) = text.find(mark) {
            let window: String = text[at..].chars().take(160).collect();
            return Err(TestCaseError::fail(format!(
                "a planted secret reached {what}: …{window}…"
            )));
        }
    }
    Ok(())
}

/// The panics this test plants print nothing; any other panic reports as usual.
fn quiet_planted_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !message.starts_with(SECRET_MARK) {
                default(info);
            }
        }));
    });
}

/// Runs `script` on a fresh agent: the scripted model (which keeps every request) and how the
/// run ended.
fn run(script: &Script) -> Result<(ScriptedModel, Result<RunOutput, RunError>), TestCaseError> {
    let model = ScriptedModel::new(
        script
            .turns
            .iter()
            .enumerate()
            .map(|(i, turn)| scripted(i + 1, turn)),
    );
    let agent = Agent::builder(model.clone())
        .instructions(INSTRUCTIONS)
        .tools(HELD.iter().map(|&held| build(held, script.nonce)))
        .max_turns(script.max_turns)
        .max_concurrency(script.max_concurrency)
        .limits(Limits {
            max_argument_bytes: LIMIT,
        })
        .build()
        .map_err(|e| TestCaseError::fail(format!("the agent does not build: {e}")))?;
    // Paused time: `sulks` waits an hour for a cancellation that may never come, instantly.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .map_err(|e| TestCaseError::fail(format!("no runtime: {e}")))?;
    // E4: a panic in a handler or a policy must not escape the run. Run it as a task, so that
    // one that did shows as a failed join here rather than as a crash of the test.
    let joined = runtime.block_on(async move {
        tokio::spawn(async move { agent.run(&Context::new(), "probe the tools").await }).await
    });
    let result =
        joined.map_err(|e| TestCaseError::fail(format!("a panic escaped the run: {e}")))?;
    Ok((model, result))
}

/// Runs `script` and checks it against the oracle. Returns labels of what it exercised.
fn check(script: &Script) -> Result<BTreeSet<String>, TestCaseError> {
    let plan = plan(script);
    let (model, result) = run(script)?;
    let requests = model.requests();
    let (transcript, records): (Vec<Message>, Vec<CallRecord>) = match &result {
        Ok(out) => (out.transcript.clone(), out.calls.clone()),
        Err(err) => (err.transcript().to_vec(), err.calls().to_vec()),
    };

    // 1. No planted secret reaches anything the model is sent (E2, E4, A6, P1, S5) ...
    for (k, request) in requests.iter().enumerate() {
        let what = format!("request {}", k + 1);
        assert_no_secret(&sent(request), &plan.secrets, &what)?;
    }
    // ... nor the transcript the run returns, which an application hands to its next run.
    let mut transcript_text = String::new();
    push_messages(&mut transcript_text, &transcript);
    assert_no_secret(&transcript_text, &plan.secrets, "the returned transcript")?;

    // 2. Each request is the one the oracle expects, and each call ends as it says.
    check_requests(&plan, &requests)?;
    let mut labels = check_calls(&plan, &records)?;

    // 3. The run ends with the right kind (R3, P3).
    check_end(&plan, &result)?;
    labels.insert(plan.end.label().to_owned());
    Ok(labels)
}

/// The number of requests; in each, the tools advertised (A2, A8) and the results of the turn
/// before it, in call order (R2), with the text the model must read (A4, A5, S2, E2).
fn check_requests(plan: &Plan, requests: &[RecordedRequest]) -> Result<(), TestCaseError> {
    prop_assert_eq!(requests.len(), plan.requests, "the number of requests");
    let advertised: Vec<&str> = HELD
        .iter()
        .filter(|h| h.advertised())
        .map(|h| h.name())
        .collect();
    for (k, request) in requests.iter().enumerate() {
        prop_assert_eq!(
            request.tool_names(),
            advertised.clone(),
            "request {}",
            k + 1
        );
        prop_assert_eq!(request.instructions.as_deref(), Some(INSTRUCTIONS));
        if k == 0 {
            continue;
        }
        // Request k + 1 carries the results of turn k, which was not fatal (there is a next
        // request), so each call ended exactly as the oracle says.
        let results = request.tool_results();
        let expected: Vec<&Planned> = plan.calls.iter().filter(|p| p.turn == k).collect();
        prop_assert_eq!(
            results.len(),
            expected.len(),
            "results in request {}",
            k + 1
        );
        for (result, planned) in results.iter().zip(expected) {
            prop_assert_eq!(&*result.call_id, planned.id.as_str());
            prop_assert!(
                planned.expect.text_fits(&result.text),
                "call {} of `{}`: expected {:?}, the model was sent {:?}",
                planned.id,
                planned.name,
                planned.expect,
                result.text
            );
            let success = planned.expect.kind() == OutcomeKind::Success;
            prop_assert_eq!(result.is_error, !success, "call {}", planned.id);
        }
    }
    Ok(())
}

/// The record of every call (E3): the calls the oracle expects, each with its kind, its text,
/// and the redacted error kept for the application.
fn check_calls(plan: &Plan, records: &[CallRecord]) -> Result<BTreeSet<String>, TestCaseError> {
    let mut labels = BTreeSet::new();
    let fatal_turn = match plan.end {
        End::Fatal { turn } => Some(turn),
        _ => None,
    };
    prop_assert_eq!(
        records.len(),
        plan.calls.len(),
        "the number of calls recorded"
    );
    for (record, planned) in records.iter().zip(&plan.calls) {
        let recorded = (record.turn, record.index, &*record.id, &*record.name);
        let wanted = (
            planned.turn,
            planned.index,
            planned.id.as_str(),
            planned.name.as_str(),
        );
        prop_assert_eq!(recorded, wanted);
        let (kind, text) = (record.kind(), record.text());
        let what = format!(
            "call {} of `{}`: expected {:?}, got {kind} {text:?}",
            planned.id, planned.name, planned.expect
        );
        if Some(planned.turn) == fatal_turn {
            // P2: in a fatal turn, a sibling may be cancelled before it ends; `sulks` may also
            // turn its cancellation into a permanent failure of its own (not the run's, P3).
            if kind == OutcomeKind::Cancelled {
                prop_assert_eq!(text, CANCELLED, "{}", what);
                labels.insert("call:cancelled".to_owned());
                continue;
            }
            if planned.expect == Expect::Patient && kind == OutcomeKind::Fatal {
                prop_assert_eq!(text, FAILED, "{}", what);
                let error = record.error().map(|e| e.kind());
                prop_assert_eq!(error, Some(ErrorKind::Permanent), "{}", what);
                labels.insert("call:cancellation-turned-permanent".to_owned());
                continue;
            }
        }
        prop_assert_eq!(kind, planned.expect.kind(), "{}", what);
        prop_assert!(planned.expect.text_fits(text), "{}", what);
        labels.insert(planned.expect.label());
        if let Expect::Fatal(fatal) = planned.expect {
            let error = record.error().map(|e| e.kind());
            prop_assert_eq!(error, Some(fatal), "{}", what);
        }
        if planned.expect == Expect::Invalid {
            // S3: a violation quotes only a short piece of the model's value.
            prop_assert!(!text.contains(&long_value()[..100]), "S3: {}", what);
        }
        // E3: what the model does not read stays available to the application. This also shows
        // that the secret was planted, so that its absence from the requests means something.
        let ran = matches!(
            planned.expect,
            Expect::Failed | Expect::Rejected(_) | Expect::Fatal(_)
        );
        if let (Some(secret), true) = (&planned.secret, ran) {
            let chain = record.error().map(|e| format!("{e:#}")).unwrap_or_default();
            prop_assert!(
                chain.contains(secret.as_str()),
                "E3: the application lost the redacted error of {}: {:?}",
                what,
                chain
            );
        }
    }
    Ok(labels)
}

fn check_end(plan: &Plan, result: &Result<RunOutput, RunError>) -> Result<(), TestCaseError> {
    let err = match (&plan.end, result) {
        (End::Answer(text), Ok(out)) => {
            prop_assert_eq!(&out.text, text);
            return Ok(());
        }
        (End::Answer(text), Err(err)) => {
            return Err(TestCaseError::fail(format!(
                "expected the answer {text:?}, the run failed: {err:#}"
            )));
        }
        (end, Ok(out)) => {
            return Err(TestCaseError::fail(format!(
                "expected {end:?}, the run answered {:?}",
                out.text
            )));
        }
        (_, Err(err)) => err,
    };
    match &plan.end {
        End::CutOff(text) => {
            prop_assert_eq!(err.kind(), ErrorKind::Truncated);
            prop_assert_eq!(err.partial_text(), Some(text.as_str()));
        }
        End::Fatal { turn } => {
            // P3: the run returns the initiating failure: one of that turn's fatal calls, with
            // its kind; never a sibling's cancellation.
            prop_assert_ne!(err.kind(), ErrorKind::Cancelled, "{:#}", err);
            prop_assert!(err.is_permanent(), "a fatal call's run error is permanent");
            let id = err.call_id();
            let initiating = plan
                .calls
                .iter()
                .find(|p| p.turn == *turn && Some(p.id.as_str()) == id);
            let Some(initiating) = initiating else {
                return Err(TestCaseError::fail(format!(
                    "the run names call {id:?}, not one of turn {turn}: {err:#}"
                )));
            };
            let Expect::Fatal(kind) = initiating.expect else {
                return Err(TestCaseError::fail(format!(
                    "the run names call {id:?}, which is not fatal ({:?}): {err:#}",
                    initiating.expect
                )));
            };
            prop_assert_eq!(err.kind(), kind, "{:#}", err);
            prop_assert_eq!(err.tool(), Some(initiating.name.as_str()));
            let record = err.calls().iter().find(|c| Some(&*c.id) == id);
            prop_assert_eq!(record.map(|c| c.kind()), Some(OutcomeKind::Fatal));
            if let Some(secret) = &initiating.secret {
                // E3: the application reads the cause.
                prop_assert!(format!("{err:#}").contains(secret.as_str()), "{:#}", err);
            }
        }
        End::Protocol { .. } => prop_assert_eq!(err.kind(), ErrorKind::Protocol, "{:#}", err),
        End::MaxTurns => prop_assert_eq!(err.kind(), ErrorKind::MaxTurns, "{:#}", err),
        End::Exhausted => prop_assert_eq!(err.kind(), ErrorKind::Model, "{:#}", err),
        End::Answer(_) => {}
    }
    Ok(())
}

fn config() -> Config {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
    Config {
        cases: env("ADVERSARIAL_CASES").map_or(256, |cases| u32::try_from(cases).unwrap_or(256)),
        rng_seed: RngSeed::Fixed(env("ADVERSARIAL_SEED").unwrap_or(0x5eed_0010)),
        // A failure prints its shrunk script; nothing is written into the source tree.
        failure_persistence: None,
        max_shrink_iters: 2048,
        ..Config::default()
    }
}

/// Generated adversarial runs. No planted secret reaches what the model is sent
/// (E2, E4, A6, P1, S5); every call ends with the kind and text the oracle expects (A4, A5,
/// S2, E2); every run ends with the right kind (R3, P3); no panic escapes (E4).
#[test]
fn e2_e4_p3_generated_adversarial_runs_leak_no_secret_and_end_with_the_right_kind() {
    quiet_planted_panics();
    let seen = RefCell::new(BTreeSet::new());
    let mut runner = TestRunner::new(config());
    let outcome = runner.run(&arb_script(), |script| {
        let labels = check(&script)?;
        seen.borrow_mut().extend(labels);
        Ok(())
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }

    // The generator is not degenerate: every kind of call and every end was exercised.
    let seen = seen.into_inner();
    let wanted = [
        "call:success",
        "call:unavailable",
        "call:invalid_arguments",
        "call:failed",
        "call:rejected",
        "call:fatal:permanent",
        "call:fatal:panic",
        "call:fatal:availability",
        "call:patient",
        "call:cancelled",
        "call:cancellation-turned-permanent",
        "end:answer",
        "end:truncated",
        "end:fatal",
        "end:protocol",
        "end:max-turns",
        "end:model",
    ];
    let missing: Vec<_> = wanted.iter().filter(|w| !seen.contains(**w)).collect();
    assert!(missing.is_empty(), "never exercised: {missing:?}");
}

/// A turn with every kind of call that lets the run go on, then a turn with every fatal one:
/// the same checks on a script a reader can follow, and a quick way to see a broken rule
/// without shrinking.
#[test]
fn every_kind_of_call_then_a_fatal_turn() {
    quiet_planted_panics();
    let echo = || Arguments::Echo {
        text: "hi".to_owned(),
        n: 3,
    };
    let calls = [
        (Target::Held(Held::Echo), echo()),
        (Target::Held(Held::Echo), Arguments::Misfit(MISFITS[1])),
        (Target::Held(Held::Gated), Arguments::Broken(Broken::Huge)),
        (Target::Held(Held::Gated), Arguments::Blank("")),
        (Target::Held(Held::Revoked), echo()),
        (Target::Held(Held::Hidden), echo()),
        (Target::Held(Held::Flip), echo()),
        (Target::Unknown("ECHO".to_owned()), echo()),
        (Target::Held(Held::Fails), echo()),
        (Target::Held(Held::Refuses), echo()),
        (Target::Held(Held::Wraps), echo()),
        (Target::Held(Held::WrapsDeep), Arguments::LongMisfit),
        (Target::Held(Held::Checked), Arguments::Code(Code::Boom)),
        (Target::Held(Held::Checked), Arguments::Code(Code::Bad)),
        (Target::Held(Held::Sulks), Arguments::Code(Code::Fine)),
        (
            Target::Held(Held::Fails),
            Arguments::Broken(Broken::Literal(BROKEN[10])),
        ),
    ];
    let script = Script {
        nonce: 7,
        max_turns: 4,
        max_concurrency: 3,
        turns: vec![
            Turn::Calls {
                text: "let me try everything".to_owned(),
                calls: calls
                    .into_iter()
                    .map(|(target, arguments)| Call { target, arguments })
                    .collect(),
                duplicate_id: false,
            },
            Turn::Calls {
                text: String::new(),
                calls: vec![
                    Call {
                        target: Target::Held(Held::Echo),
                        arguments: echo(),
                    },
                    Call {
                        target: Target::Held(Held::Panics),
                        arguments: echo(),
                    },
                    Call {
                        target: Target::Held(Held::PolicyFails),
                        arguments: Arguments::Broken(Broken::Deep),
                    },
                    Call {
                        target: Target::Held(Held::Sulks),
                        arguments: Arguments::Blank(" "),
                    },
                    Call {
                        target: Target::Held(Held::PermanentApproved),
                        arguments: echo(),
                    },
                    Call {
                        target: Target::Held(Held::PanicsEarly),
                        arguments: echo(),
                    },
                    Call {
                        target: Target::Held(Held::PolicyPanics),
                        arguments: echo(),
                    },
                ],
                duplicate_id: false,
            },
            Turn::Reply("never sent".to_owned()),
        ],
    };
    match check(&script) {
        Ok(labels) => assert!(labels.contains("end:fatal"), "{labels:?}"),
        Err(e) => panic!("{e}"),
    }
}
