//! Durable agent runs on Restate.
