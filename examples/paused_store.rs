//! Paused runs kept in PostgreSQL (H8, H9): the approvals flow of `examples/approvals.rs`,
//! with the paused run saved in a `jsonb` column and its pause consumed in the same database
//! when it is resumed, so that a state resumes once.
//!
//! ```text
//! export DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres
//! cargo run --example paused_store -- pause
//! cargo run --example paused_store -- list
//! cargo run --example paused_store -- resume PAUSE_ID approve   # or deny
//! cargo run --example paused_store -- resume PAUSE_ID approve   # refused: resumed before
//! ```
//!
//! 1. `pause` runs an admin's request to restart `svc-42` on the offline model; the restart of
//!    a production service waits for approval, so the run pauses. The paused run is saved in
//!    `paused_runs.state` (`jsonb`), and its pause id and pending call are printed.
//! 2. `resume PAUSE_ID approve|deny`, in another process, loads the state back from the
//!    `jsonb` column (PostgreSQL reordered and respaced it: it still verifies, H8), checks it
//!    against its own agent, and resumes it with the decision and the database as its ledger:
//!    the pause id is consumed in `consumed_pauses` before anything runs. A second resume of
//!    the same pause is refused as a replay and exits 1; the restart does not run twice (H9).
//! 3. `list` prints the stored pauses not resumed yet.
//!
//! The tables are created on first use. Set `PAUSED_STORE_STATE_KEY` (the same in every
//! process) to seal with HMAC-SHA256 under that key. The program is
//! `tool_examples::paused_store::cli`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code =
        tool_examples::paused_store::cli(&args, &mut std::io::stdout(), &mut std::io::stderr());
    ExitCode::from(code)
}
