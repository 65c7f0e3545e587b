//! The argument repair of an agent (Q4) under the same generated hostile inputs: the default
//! [`LenientJson`] never panics, what it returns is always JSON, that JSON is validated like
//! any arguments (no breach reaches a handler), and its cost is linear in its input.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::time::Instant;

use tool_runtime::{Context, LenientJson, Limits, OutcomeKind, RepairArguments};

use super::{Family, Report, Rng, Seen, block_on, inputs, show, targets};

/// Repairs `inputs` generated inputs (from `seed`, as [`super::run`] makes them, and the
/// same mangled as models mangle JSON), then calls each target with what the repair gave.
pub fn run(seed: u64, inputs: u64) -> Report {
    let seen: &'static Seen = Box::leak(Box::default());
    let targets = targets(seen);
    let (ctx, limits) = (Context::new(), Limits::default());
    let mut rng = Rng::new(seed);
    let mut report = Report::default();
    for n in 0..inputs {
        let target = &targets[usize::try_from(n).unwrap_or(0) % targets.len()];
        let family = *rng.pick(&Family::WEIGHTED);
        let bytes = inputs::generate(&mut rng, family, target.seeds, target.keys);
        let text = mangle(&mut rng, &String::from_utf8_lossy(&bytes));
        report.inputs += 1;
        report.bytes += text.len() as u64;
        let repaired = std::panic::catch_unwind(AssertUnwindSafe(|| LenientJson.repair(&text)));
        let fixed = match repaired {
            Err(_) => {
                report.panics += 1;
                report.problem(format!("repair panicked on {}", show(text.as_bytes())));
                continue;
            }
            Ok(None) => continue,
            Ok(Some(fixed)) => fixed,
        };
        if serde_json::from_str::<serde::de::IgnoredAny>(&fixed).is_err() {
            report.disagreements += 1;
            report.problem(format!(
                "repair gave text that is not JSON: {}",
                show(fixed.as_bytes())
            ));
            continue;
        }
        let outcome = block_on(target.tool.invoke_with(&ctx, fixed.as_bytes(), &limits));
        if outcome.kind() == OutcomeKind::Fatal {
            report.panics += 1;
        }
        if let Some(first) = outcome.violations().first() {
            *report.violations.entry(first.rule.keyword()).or_default() += 1;
        }
    }
    report.handled = seen.handled.load(Ordering::Relaxed) as u64;
    report.breaches = seen.breaches.load(Ordering::Relaxed) as u64;
    report
}

/// `text` mangled the ways the repair fixes, at random: single quotes for double, a comma
/// before each closing bracket, a code fence around, the end cut off.
fn mangle(rng: &mut Rng, text: &str) -> String {
    let mut text = text.to_owned();
    if rng.one_in(3) {
        text = text.replace('"', "'");
    }
    if rng.one_in(3) {
        text = text.replace('}', ",}").replace(']', ",]");
    }
    if rng.one_in(4) {
        text = format!("```json\n{text}\n```");
    }
    if rng.one_in(3) && !text.is_empty() {
        let mut cut = rng.below(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

/// The time per byte of repairing inputs of the larger size over the smaller (best of
/// `repeats`), for each shape of growing input: linear cost keeps each near 1.
pub fn linearity(sizes: (usize, usize), repeats: usize) -> Vec<(String, f64)> {
    type Make = fn(usize) -> String;
    let cases: [(&str, Make); 4] = [
        ("unclosed nesting", |n| "{'a': [".repeat(n)),
        ("unquoted keys and trailing commas", |n| {
            format!("{{{}}}", "key: 'value', ".repeat(n))
        }),
        ("a truncated single-quoted string", |n| {
            format!("{{'a': '{}", "x\\'".repeat(n))
        }),
        ("words that are not JSON", |n| "word ".repeat(n)),
    ];
    let per_byte = |make: Make, n: usize| {
        let text = make(n);
        let best = (0..repeats)
            .map(|_| {
                let start = Instant::now();
                let _kept = std::hint::black_box(LenientJson.repair(&text));
                start.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        best / text.len() as f64
    };
    cases
        .iter()
        .map(|(name, make)| {
            let ratio = per_byte(*make, sizes.1) / per_byte(*make, sizes.0);
            ((*name).to_owned(), ratio)
        })
        .collect()
}
