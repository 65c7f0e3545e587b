//! Fuzzes the argument parser at scale: `cargo run --release -p tool-tests --bin fuzz --
//! --inputs 1000000 [--seed N]`. Prints what it found and the cost ratios, and exits non-zero
//! on any panic, breach or disagreement with serde_json.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut inputs: u64 = 1_000_000;
    let mut seed: u64 = 1;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().and_then(|v| v.parse().ok());
        match (arg.as_str(), value) {
            ("--inputs", Some(n)) => inputs = n,
            ("--seed", Some(n)) => seed = n,
            _ => {
                eprintln!("usage: fuzz [--inputs N] [--seed N]");
                return ExitCode::from(2);
            }
        }
    }
    let report = tool_tests::fuzz::run(seed, inputs);
    println!("seed {seed}: {report}");
    println!("cost per byte at 16x the input, relative to 1x (linear is about 1):");
    for (case, ratio) in tool_tests::fuzz::linearity((2_000, 32_000), 7) {
        println!("  {case}: {ratio:.2}");
    }
    if report.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
