//! Examples of tool-runtime; run them with `cargo run --example NAME`.

pub mod approvals;
pub mod durable;
#[cfg(all(feature = "mcp", feature = "schemars"))]
pub mod from_rmcp;
pub mod local_postgres;
pub mod maintenance;
#[cfg(feature = "mcp")]
pub mod maintenance_catalog;
#[cfg(feature = "mcp")]
pub mod mcp_oauth;
pub mod paused_store;
#[cfg(feature = "mcp")]
pub mod serve;
#[cfg(feature = "mcp")]
pub mod surface;

use std::process::ExitCode;

/// The exit of an example's `main`: success, or the error and each of its causes printed with
/// `Display` (the words a user reads, not the `Debug` form a `main` returning `Result` prints)
/// on stderr, and exit code 1. A cause whose text the lines above already hold is not
/// repeated.
pub fn exit_with<E: std::error::Error + ?Sized>(result: Result<(), Box<E>>) -> ExitCode {
    let Err(error) = result else {
        return ExitCode::SUCCESS;
    };
    let mut shown = error.to_string();
    eprintln!("error: {shown}");
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !shown.contains(&text) {
            eprintln!("  caused by: {text}");
            shown.push_str(&text);
        }
        source = cause.source();
    }
    ExitCode::FAILURE
}
