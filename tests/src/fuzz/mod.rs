//! A fuzzing harness for call arguments, on the stable toolchain: it generates hostile inputs
//! for several rich schemas, calls each tool through `Tool::invoke` as a transport would, and
//! checks the promises of S2–S4 and E4:
//!
//! - nothing panics, and no call ends fatally;
//! - no handler receives a value that breaks a declared constraint (an oracle written apart
//!   from the parser checks every value a handler gets);
//! - the parser agrees with `serde_json` on what is JSON: text `serde_json` rejects is a
//!   `syntax` violation, and text it accepts (without a key sent twice) is not;
//! - the cost of a call is linear in its input (see [`linearity`]).
//!
//! `tests/fuzz.rs` runs a small version in the test suite;
//! `cargo run --release -p tool-tests --bin fuzz -- --inputs 1000000` runs it at scale.

mod inputs;
pub mod repair;
mod rng;
mod targets;

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::atomic::Ordering;
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Instant;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use tool_runtime::{Context, Limits, OutcomeKind, Rule};

pub use inputs::Family;
pub use rng::Rng;
pub use targets::{Seen, Target, targets};

/// What one fuzzing run found.
#[derive(Debug, Default)]
pub struct Report {
    /// Inputs tried (each against one target).
    pub inputs: u64,
    /// Bytes tried, in all.
    pub bytes: u64,
    /// Calls whose handler ran.
    pub handled: u64,
    /// Calls answered with violations, by the rule of their first violation.
    pub violations: BTreeMap<&'static str, u64>,
    /// Calls that panicked out of `invoke`, or ended fatally.
    pub panics: u64,
    /// Values that reached a handler while breaking a declared constraint.
    pub breaches: u64,
    /// Inputs on which the parser and `serde_json` disagreed about what is JSON.
    pub disagreements: u64,
    /// The first problems found, with the input that shows each.
    pub problems: Vec<String>,
}

impl Report {
    /// Whether nothing went wrong.
    pub fn is_clean(&self) -> bool {
        self.panics == 0 && self.breaches == 0 && self.disagreements == 0
    }

    fn problem(&mut self, what: String) {
        if self.problems.len() < 16 {
            self.problems.push(what);
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "inputs: {}, bytes: {}, handled: {}, rejected: {}, panics: {}, breaches: {}, \
             disagreements with serde_json: {}",
            self.inputs,
            self.bytes,
            self.handled,
            self.violations.values().sum::<u64>(),
            self.panics,
            self.breaches,
            self.disagreements
        )?;
        write!(f, "rejected by first rule:")?;
        for (rule, n) in &self.violations {
            write!(f, " {rule}={n}")?;
        }
        for problem in &self.problems {
            write!(f, "\n  problem: {problem}")?;
        }
        Ok(())
    }
}

/// Calls `inputs` generated inputs, from `seed`, against every target in turn.
pub fn run(seed: u64, inputs: u64) -> Report {
    // The handlers report into a leaked `Seen`: one per run, small, and it outlives the tools.
    let seen: &'static Seen = Box::leak(Box::default());
    let targets = targets(seen);
    let ctx = Context::new();
    let limits = Limits::default();
    let mut rng = Rng::new(seed);
    let mut report = Report::default();
    for n in 0..inputs {
        let target = &targets[usize::try_from(n).unwrap_or(0) % targets.len()];
        let family = *rng.pick(&Family::WEIGHTED);
        let bytes = inputs::generate(&mut rng, family, target.seeds, target.keys);
        report.inputs += 1;
        report.bytes += bytes.len() as u64;
        check_one(target, &ctx, &limits, &bytes, &mut report);
    }
    report.handled = seen.handled.load(Ordering::Relaxed) as u64;
    report.breaches = seen.breaches.load(Ordering::Relaxed) as u64;
    if let Ok(examples) = seen.examples.lock() {
        for example in examples.iter() {
            report.problem(format!("breach: {example}"));
        }
    }
    report
}

fn check_one(target: &Target, ctx: &Context, limits: &Limits, bytes: &[u8], report: &mut Report) {
    let name = target.tool.name();
    let call = std::panic::catch_unwind(AssertUnwindSafe(|| {
        block_on(target.tool.invoke_with(ctx, bytes, limits))
    }));
    let outcome = match call {
        Ok(outcome) => outcome,
        Err(_) => {
            report.panics += 1;
            report.problem(format!("{name}: panic on {}", show(bytes)));
            return;
        }
    };
    if outcome.kind() == OutcomeKind::Fatal {
        report.panics += 1;
        report.problem(format!(
            "{name}: fatal outcome {:?} on {}",
            outcome.error().map(ToString::to_string),
            show(bytes)
        ));
        return;
    }
    let first = outcome.violations().first().map(|v| v.rule);
    if let Some(rule) = first {
        *report.violations.entry(rule.keyword()).or_default() += 1;
    }
    if bytes.len() > limits.max_argument_bytes {
        return;
    }
    let syntax = first == Some(Rule::Syntax);
    let is_json = is_json_without_duplicates(bytes);
    if is_json == syntax {
        report.disagreements += 1;
        report.problem(format!(
            "{name}: serde_json says {}, the parser said {} on {}",
            if is_json {
                "JSON"
            } else {
                "not JSON (or a key twice)"
            },
            outcome.text().chars().take(120).collect::<String>(),
            show(bytes)
        ));
    }
}

/// Whether `bytes` are one JSON value to `serde_json`, with no object holding a key twice. Blank
/// arguments are the empty object, as the transports send them for a tool without parameters.
fn is_json_without_duplicates(bytes: &[u8]) -> bool {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return true;
    }
    let mut decoder = serde_json::Deserializer::from_slice(bytes);
    NoDuplicates.deserialize(&mut decoder).is_ok() && decoder.end().is_ok()
}

/// Walks any JSON value, failing on an object that holds a key twice.
#[derive(Clone, Copy)]
struct NoDuplicates;

impl<'de> DeserializeSeed<'de> for NoDuplicates {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, decoder: D) -> Result<(), D::Error> {
        decoder.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoDuplicates {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        if v.is_finite() {
            Ok(())
        } else {
            Err(E::custom("not finite"))
        }
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key) {
                return Err(de::Error::custom("a key twice"));
            }
            map.next_value_seed(self)?;
        }
        Ok(())
    }
}

/// Makes an input of a given size.
type MakeInput = Box<dyn Fn(usize) -> Vec<u8>>;

/// How the cost of a call grows with its input: for each family of growing input, the time
/// per byte at the largest size divided by the time per byte at the smallest (best of
/// `repeats` runs each). Linear cost keeps every ratio near 1; quadratic cost makes it grow
/// with the sizes' ratio.
pub fn linearity(sizes: (usize, usize), repeats: usize) -> Vec<(String, f64)> {
    let seen: &'static Seen = Box::leak(Box::default());
    let targets = targets(seen);
    let ctx = Context::new();
    let limits = Limits {
        max_argument_bytes: usize::MAX,
    };
    let window = &targets[0];
    let ticket = &targets[1];
    let tree = &targets[2];
    let cases: Vec<(&str, &Target, MakeInput)> = vec![
        (
            "undeclared keys",
            window,
            Box::new(|n| inputs::many_keys(r#"{"service_id":"a"}"#, n)),
        ),
        (
            "keys inside an undeclared member",
            window,
            Box::new(|n| {
                let inner = inputs::many_keys("{}", n);
                let mut text = br#"{"service_id":"a","extra":"#.to_vec();
                text.extend(inner);
                text.push(b'}');
                text
            }),
        ),
        (
            "unique items",
            ticket,
            Box::new(|n| {
                let scores: Vec<String> = (0..n).map(|i| format!("{i}.5")).collect();
                format!(
                    r#"{{"title":"t","priority":"low","tags":[],"ratio":1,"count":1,"scores":[{}]}}"#,
                    scores.join(",")
                )
                .into_bytes()
            }),
        ),
        (
            "a long string against a pattern",
            window,
            Box::new(|n| format!(r#"{{"service_id":"{}"}}"#, "a-".repeat(n)).into_bytes()),
        ),
        (
            "many children",
            tree,
            Box::new(|n| {
                let child = r#"{"name":"c"},"#.repeat(n);
                format!(r#"{{"name":"r","children":[{}{{"name":"d"}}]}}"#, child).into_bytes()
            }),
        ),
        (
            "many labels",
            ticket,
            Box::new(|n| {
                let labels: Vec<String> = (0..n).map(|i| format!("\"l{i}\":{i}")).collect();
                format!(
                    r#"{{"title":"t","priority":"low","tags":[],"ratio":1,"count":1,"labels":{{{}}}}}"#,
                    labels.join(",")
                )
                .into_bytes()
            }),
        ),
    ];
    cases
        .into_iter()
        .map(|(name, target, make)| {
            let inputs = [make(sizes.0), make(sizes.1)];
            (
                name.to_owned(),
                growth(target, &inputs, &ctx, &limits, repeats),
            )
        })
        .collect()
}

/// The time per byte of `target` on the large input over that on the small one. Small and
/// large in turn, best of `repeats` each: a burst of load on a shared machine then lands on
/// both sizes alike, rather than on one.
fn growth(
    target: &Target,
    inputs: &[Vec<u8>; 2],
    ctx: &Context,
    limits: &Limits,
    repeats: usize,
) -> f64 {
    let mut best = [f64::INFINITY; 2];
    for _ in 0..repeats {
        for (input, best) in inputs.iter().zip(&mut best) {
            let start = Instant::now();
            let _ = block_on(target.tool.invoke_with(ctx, input, limits));
            *best = best.min(start.elapsed().as_secs_f64() / input.len() as f64);
        }
    }
    best[1] / best[0]
}

/// Polls a future that never waits on I/O (the targets' handlers return at once) to its end.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = TaskContext::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::yield_now();
    }
}

/// A short, printable form of an input.
fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut shown: String = text.chars().take(160).collect();
    if text.chars().count() > 160 {
        shown.push_str(&format!("… ({} bytes)", bytes.len()));
    }
    format!("{shown:?}")
}
