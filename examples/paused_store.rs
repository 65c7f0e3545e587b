//! Paused runs kept in PostgreSQL (H8, H9): the approvals flow of `examples/approvals.rs`,
//! with the paused run saved in a `jsonb` column and its pause consumed in the same database
//! when it is resumed, so that a state resumes once.
//!
//! ```text
//! cargo run --example paused_store -- pause
//! cargo run --example paused_store -- list
//! cargo run --example paused_store -- resume PAUSE_ID approve   # or deny
//! cargo run --example paused_store -- resume PAUSE_ID approve   # refused: resumed before
//! cargo run --example paused_store -- stop                      # removes the example's server
//! ```
//!
//! The database is `DATABASE_URL` (such as `postgresql://postgres@127.0.0.1:5432/postgres`).
//! When it is not set, the first command starts a PostgreSQL server of the example's own: a
//! throwaway cluster in the temporary directory (`$TMPDIR/tool-examples-paused-store-pg`, on
//! a free loopback port, run as the `postgres` user when the example runs as root), which the
//! next commands use and `stop` removes. That needs PostgreSQL's server programs (`initdb`,
//! `pg_ctl`, `postgres`) installed, or `PG_BIN` set to their directory.
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
//! 4. `stop` stops the example's own server and removes its directory.
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
