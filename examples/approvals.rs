//! Human approval across two processes:
//!
//! ```text
//! cargo run --example approvals -- pause target/approvals-state.json
//! cargo run --example approvals -- resume target/approvals-state.json approve   # or deny
//! ```
//!
//! 1. `pause` runs an admin's request to restart `svc-42` on the offline model. The lookup it
//!    also asks for runs; the restart of a production service waits for approval (its
//!    predicate says why), so the run pauses. The pending call is printed and the paused run,
//!    plain JSON sealed with a digest, is written to the file named. The process exits:
//!    nothing waits in memory.
//! 2. `resume` is another process: it reads the file, checks it against its own agent (same
//!    tools; an edited file is refused, and the program exits non-zero with the reason),
//!    resumes the run with the decision, and prints what the model got back and its final
//!    answer. The resume is recorded beside the file (`approvals-state.json.resumed/`): a
//!    second resume of the same file is refused, saying so, and nothing runs twice.
//!
//! Set `APPROVALS_STATE_KEY` (the same in both processes) to seal with HMAC-SHA256 under that
//! key instead. The program is `tool_examples::approvals::cli`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = tool_examples::approvals::cli(&args, &mut std::io::stdout(), &mut std::io::stderr());
    ExitCode::from(code)
}
