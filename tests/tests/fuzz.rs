//! The fuzzing harness (`tool_tests::fuzz`) at a size for the test suite: hostile arguments
//! never panic, never reach a handler unvalidated (S2–S4, E4), agree with serde_json on what
//! is JSON, and cost time linear in their size. `cargo run --release -p tool-tests --bin fuzz
//! -- --inputs 1000000` runs the same at scale.

use std::sync::Mutex;

use tool_tests::fuzz;

/// The two tests take turns: the cost measurement is not to share the cores with the fuzzing.
static ALONE: Mutex<()> = Mutex::new(());

#[test]
fn s2_s4_e4_generated_hostile_arguments_are_answered_never_panic_or_breach() {
    let _alone = ALONE.lock();
    // Two seeds, so a change of generator still covers a fixed and a new stream.
    for seed in [1, 0x5eed_2026] {
        let report = fuzz::run(seed, 6_000);
        println!("seed {seed}: {report}");
        assert!(report.is_clean(), "seed {seed}: {report}");
        assert!(
            report.handled > 100,
            "valid inputs reach handlers: {report}"
        );
        assert!(
            report.violations.len() >= 8,
            "many rules are exercised: {report}"
        );
    }
}

/// The cost of a call grows linearly with its input. Quadratic cost on 16
/// times the input would make the time per byte 16 times larger; linear keeps it near 1.
#[test]
fn s2_parse_cost_is_linear_in_the_input() {
    let _alone = ALONE.lock();
    let ratios = fuzz::linearity((1_000, 16_000), 7);
    println!("{ratios:?}");
    for (case, ratio) in ratios {
        assert!(
            ratio < 5.0,
            "{case}: the time per byte grew {ratio:.1}x for 16x the input"
        );
    }
}

/// Q4: the agent's default argument repair under generated hostile inputs, mangled as models
/// mangle JSON: it never panics, what it gives is JSON, and that JSON is validated like any
/// arguments (no breach reaches a handler).
#[test]
fn q4_generated_hostile_arguments_repaired_never_panic_and_stay_validated() {
    let _alone = ALONE.lock();
    for seed in [3, 0x5eed_2026] {
        let report = fuzz::repair::run(seed, 6_000);
        println!("seed {seed}: {report}");
        assert!(report.is_clean(), "seed {seed}: {report}");
        assert!(
            report.handled > 50,
            "repaired inputs reach handlers: {report}"
        );
    }
}

/// Q4: the repair's cost is linear in its input (see `s2_parse_cost_is_linear_in_the_input`).
#[test]
fn q4_repair_cost_is_linear_in_the_input() {
    let _alone = ALONE.lock();
    let ratios = fuzz::repair::linearity((2_000, 32_000), 7);
    println!("{ratios:?}");
    for (case, ratio) in ratios {
        assert!(
            ratio < 5.0,
            "{case}: the time per byte grew {ratio:.1}x for 16x the input"
        );
    }
}
