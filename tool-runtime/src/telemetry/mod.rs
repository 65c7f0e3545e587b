//! What the spans of every transport share (K2): span fields named as the OpenTelemetry
//! semantic conventions name them, and the end of a tool call recorded the same way on the
//! agent's `execute_tool` span and the MCP server's `tools/call` span.
//!
//! The spans are plain `tracing` spans. Their `otel.*` fields (`otel.name`, `otel.kind`,
//! `otel.status_code`) are the ones `tracing-opentelemetry` reads to name a span, give its kind
//! and mark it failed; the others become attributes as they are. An application that exports
//! spans adds that layer itself. What a `tracing` field cannot carry (a string array, a link,
//! a remote parent) goes through the OpenTelemetry API with the `opentelemetry` feature
//! ([`context`]).
//!
//! Every value is displayed lazily, so a span that no subscriber wants costs no allocation:
//! `tracing` evaluates a field only for a span that is enabled.

mod context;
pub(crate) mod metrics;

use std::fmt::{self, Write as _};

use tool_core::Outcome;
use tracing::Span;
use tracing::field::display;

#[cfg(feature = "mcp")]
pub(crate) use context::continue_from;
pub(crate) use context::{link, of_span};

/// The longest piece of a model-supplied tool name or call id a span shows, in characters.
const PREVIEW_CHARS: usize = 64;

/// The `otel.status_code` of a span whose operation failed.
const STATUS_ERROR: &str = "ERROR";

/// `prefix` followed by a short preview of `text` (the first [`PREVIEW_CHARS`] characters,
/// `…` after a cut), written when displayed: span names such as `execute_tool {tool}` and
/// model-supplied names and ids, without an allocation for a span nobody records.
#[derive(Clone, Copy)]
pub(crate) struct Named<'a> {
    prefix: &'static str,
    text: &'a str,
}

impl<'a> Named<'a> {
    /// `prefix` then a preview of `text`; when `text` is empty, `prefix` without its trailing
    /// space (`chat` for a model with no name).
    pub(crate) fn new(prefix: &'static str, text: &'a str) -> Self {
        Self { prefix, text }
    }

    /// A preview of `text` alone.
    pub(crate) fn short(text: &'a str) -> Self {
        Self::new("", text)
    }
}

impl fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.text.is_empty() {
            return f.write_str(self.prefix.trim_end());
        }
        f.write_str(self.prefix)?;
        match self.text.char_indices().nth(PREVIEW_CHARS) {
            Some((end, _)) => {
                f.write_str(&self.text[..end])?;
                f.write_char('…')
            }
            None => f.write_str(self.text),
        }
    }
}

/// A kind's display in snake case, as `error.type` wants a low-cardinality identifier:
/// `max turns` becomes `max_turns`. Written when displayed.
pub(crate) struct SnakeCase<T>(pub(crate) T);

impl<T: fmt::Display> fmt::Display for SnakeCase<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Underscores<'a, 'b>(&'a mut fmt::Formatter<'b>);
        impl fmt::Write for Underscores<'_, '_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                for (i, part) in s.split(' ').enumerate() {
                    if i > 0 {
                        self.0.write_char('_')?;
                    }
                    self.0.write_str(part)?;
                }
                Ok(())
            }
        }
        write!(Underscores(f), "{}", self.0)
    }
}

/// Marks `span` failed: `error.type` (a kind, never a message: what a message says may be
/// redacted from the model, E2) and `otel.status_code = ERROR`.
pub(crate) fn record_error(span: &Span, error_type: impl fmt::Display) {
    span.record("error.type", display(error_type));
    span.record("otel.status_code", STATUS_ERROR);
}

/// Records `gen_ai.response.finish_reasons`, a string array (K4).
pub(crate) fn record_finish_reasons(span: &Span, reasons: &[&str]) {
    context::record_strings(span, "gen_ai.response.finish_reasons", reasons);
}

/// Records the end of one tool call on its span: its outcome kind (`tool_runtime.outcome`), and for any
/// outcome but a success `error.type` (`error_type`) and the error status; with `content`,
/// the text the model (or the MCP client) was given as `gen_ai.tool.call.result`. That text
/// is the redacted one (E2): an unredacted error never reaches a span's attributes.
pub(crate) fn record_call_end(
    span: &Span,
    outcome: &Outcome,
    error_type: impl fmt::Display,
    content: bool,
) {
    span.record("tool_runtime.outcome", display(outcome.kind()));
    if outcome.kind() != tool_core::OutcomeKind::Success {
        record_error(span, error_type);
    }
    if content {
        span.record("gen_ai.tool.call.result", outcome.text());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_and_kinds_snake_cased_k2() {
        assert_eq!(
            Named::new("execute_tool ", "lookup").to_string(),
            "execute_tool lookup"
        );
        assert_eq!(Named::new("chat ", "").to_string(), "chat");
        let long = "é".repeat(PREVIEW_CHARS + 5);
        let shown = Named::short(&long).to_string();
        assert_eq!(shown.chars().count(), PREVIEW_CHARS + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(SnakeCase("max turns").to_string(), "max_turns");
        assert_eq!(SnakeCase("cancelled").to_string(), "cancelled");
    }
}
