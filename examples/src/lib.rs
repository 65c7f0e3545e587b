//! Examples of tool-runtime; run them with `cargo run --example NAME`.

pub mod approvals;
pub mod durable;
#[cfg(all(feature = "mcp", feature = "schemars"))]
pub mod from_rmcp;
pub mod local_postgres;
pub mod maintenance;
pub mod paused_store;
#[cfg(feature = "mcp")]
pub mod serve;
#[cfg(feature = "mcp")]
pub mod surface;
