//! The rules of `tool-runtime` that are checked twice: by the macros at compile time and by
//! the core at run time, so both read them from here.
//!
//! - [`name`]: what a tool name may be (rule N1), the fix proposed for a bad one, and the
//!   names the macros derive (N2).
//! - [`format`](mod@format): the string `format`s that are enforced, and their checks.
//! - [`pattern`]: the translation of an ECMA-262 `pattern` into the syntax of the Rust `regex`
//!   crate, with the same meaning (S2).
//! - [`mcp_name`]: what an MCP prompt or resource name may be (M7).
//! - [`uri_template`]: the URI templates of MCP resource templates (M7).
//!
//! This crate depends on `std` alone: `tool-macros` builds on it, and a proc-macro crate
//! depends on parsing crates and pure rule code, never on the runtime.

#![deny(unreachable_pub)]
pub mod format;
pub mod mcp_name;
pub mod name;
pub mod pattern;
pub mod uri_template;

pub use format::Format;
