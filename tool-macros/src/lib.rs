//! Macros.
