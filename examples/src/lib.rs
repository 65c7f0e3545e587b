//! Examples of tool-runtime; run them with `cargo run --example NAME`.

pub mod approvals;
pub mod durable;
pub mod maintenance;
pub mod paused_store;
#[cfg(feature = "mcp")]
pub mod serve;
#[cfg(feature = "mcp")]
pub mod surface;
