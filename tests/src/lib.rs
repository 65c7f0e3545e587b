//! Shared items of the integration tests: a user crate that names only `tool-runtime`.
