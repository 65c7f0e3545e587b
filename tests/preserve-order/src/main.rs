//! H8 in a build where serde_json's `preserve_order` is on (see Cargo.toml):
//!
//! - `preserve-order-h8 pause OUT [KEY]` runs the scenario's run (`scenario.rs`), which
//!   pauses, and writes the paused run's JSON to OUT, sealed with KEY when there is one;
//! - `preserve-order-h8 resume IN [KEY]` resumes the paused run in IN with its call approved,
//!   in an agent with KEY when there is one, and prints the answer and the arguments the tool
//!   ran with (`answer: …`, `ran with: …`).
//!
//! It first checks that `preserve_order` is on here (a map keeps the order it was read in) and
//! prints `preserve_order: on`. Exit status: 0 done, 1 a usage or file error, 2 the run did
//! not pause or its paused run was refused (the reason printed), 3 `preserve_order` is off.

mod scenario;

use std::fmt;
use std::process::ExitCode;

use tool_runtime::{PausedRun, ResumeError};

use scenario::Failure;

/// What went wrong, and the exit status it gives.
enum Error {
    /// The arguments are not a mode and a file.
    Usage,
    /// The file could not be read or written.
    File(String, std::io::Error),
    /// The file is not a paused run.
    Malformed(ResumeError),
    /// The paused run, or what the tool ran with, could not be written as JSON.
    Json(serde_json::Error),
    /// The scenario failed: the run did not pause, or the paused run was refused.
    Scenario(Failure),
    /// serde_json keeps maps sorted here: this build tests nothing.
    OrderNotPreserved,
}

impl Error {
    /// The exit status it gives.
    fn status(&self) -> u8 {
        match self {
            Error::Usage | Error::File(..) | Error::Json(_) => 1,
            Error::Malformed(_) | Error::Scenario(_) => 2,
            Error::OrderNotPreserved => 3,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage => {
                f.write_str("usage: preserve-order-h8 pause OUT [KEY] | resume IN [KEY]")
            }
            Error::File(path, e) => write!(f, "{path}: {e}"),
            Error::Malformed(e) => write!(f, "{e}"),
            Error::Json(e) => write!(f, "JSON could not be written: {e}"),
            Error::Scenario(e) => write!(f, "{e}"),
            Error::OrderNotPreserved => {
                f.write_str("serde_json's preserve_order is off in this build: it tests nothing")
            }
        }
    }
}

/// Runs the mode the arguments name; prints why it failed, if it did.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("preserve-order-h8: {error}");
            ExitCode::from(error.status())
        }
    }
}

/// Checks that `preserve_order` is on, then pauses or resumes as `args` say.
async fn run(args: Vec<String>) -> Result<(), Error> {
    if !scenario::preserves_order() {
        return Err(Error::OrderNotPreserved);
    }
    println!("preserve_order: on");
    let (mode, path, key) = match args.as_slice() {
        [mode, path] => (mode.as_str(), path.as_str(), None),
        [mode, path, key] => (mode.as_str(), path.as_str(), Some(key.as_bytes())),
        _ => return Err(Error::Usage),
    };
    let file_error = |e| Error::File(path.to_owned(), e);
    match mode {
        "pause" => {
            let paused = scenario::pause(key).await.map_err(Error::Scenario)?;
            let text = paused.to_json().map_err(Error::Json)?;
            std::fs::write(path, text).map_err(file_error)
        }
        "resume" => {
            let text = std::fs::read_to_string(path).map_err(file_error)?;
            let paused = PausedRun::from_json(&text).map_err(Error::Malformed)?;
            let (answer, ran) = scenario::resume(paused, key)
                .await
                .map_err(Error::Scenario)?;
            let ran = serde_json::to_string(&ran).map_err(Error::Json)?;
            println!("answer: {answer}\nran with: {ran}");
            Ok(())
        }
        _ => Err(Error::Usage),
    }
}
