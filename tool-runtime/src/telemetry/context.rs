//! What the `tracing` spans cannot say alone (K4, K6): attributes of a type `tracing` has no
//! field for (a string array), links between spans, and W3C trace context (`traceparent`,
//! `tracestate`) read from a span and continued by another.
//!
//! With the `opentelemetry` feature these go through `tracing-opentelemetry`'s span
//! extension, and take effect when the application's subscriber has its layer; without that
//! layer (or without the feature) a span has no OpenTelemetry context: nothing is propagated,
//! linked or parented, and an array is recorded as the plain `tracing` field instead.

use tracing::Span;

/// The W3C trace context of a span: its `traceparent` and, if any, its `tracestate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TraceContext {
    /// `00-{trace id}-{span id}-{flags}`.
    pub(crate) traceparent: String,
    /// The vendors' entries, `key=value` separated by commas; `None` when empty.
    pub(crate) tracestate: Option<String>,
}

/// Records `values` on `span` as the string array `key`, or, without an OpenTelemetry layer,
/// as the plain field `key` holding them joined by commas (a `tracing` field holds no list).
pub(crate) fn record_strings(span: &Span, key: &'static str, values: &[&str]) {
    #[cfg(feature = "opentelemetry")]
    if otel::set_strings(span, key, values) {
        return;
    }
    span.record(key, values.join(",").as_str());
}

/// The trace context of `span`, when it is part of an OpenTelemetry trace.
pub(crate) fn of_span(span: &Span) -> Option<TraceContext> {
    #[cfg(feature = "opentelemetry")]
    return otel::of_span(span);
    #[cfg(not(feature = "opentelemetry"))]
    {
        let _ = span;
        None
    }
}

#[cfg(feature = "mcp")]
/// Makes `span` a child of the remote span `parent` names (a caller's `traceparent`, with its
/// `tracestate`). An invalid `traceparent` is ignored: the span stays where it was.
pub(crate) fn continue_from(span: &Span, parent: Option<&str>, state: Option<&str>) {
    #[cfg(feature = "opentelemetry")]
    if let Some(parent) = parent {
        otel::continue_from(span, parent, state);
    }
    #[cfg(not(feature = "opentelemetry"))]
    let _ = (span, parent, state);
}

/// Links `span` to the span `traceparent` names (the run a resumed run continues).
pub(crate) fn link(span: &Span, traceparent: Option<&str>) {
    #[cfg(feature = "opentelemetry")]
    if let Some(traceparent) = traceparent {
        otel::link(span, traceparent);
    }
    #[cfg(not(feature = "opentelemetry"))]
    let _ = (span, traceparent);
}

#[cfg(feature = "opentelemetry")]
mod otel {
    use opentelemetry::trace::TraceState;
    use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId};
    use opentelemetry::{Array, StringValue, Value};
    use tracing::Span;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    use super::TraceContext;

    /// The version of `traceparent` this writes, and the one it reads.
    const VERSION: &str = "00";

    /// Whether `span` is known to an OpenTelemetry layer.
    fn exported(span: &Span) -> bool {
        !span.is_disabled() && span.context().has_active_span()
    }

    pub(super) fn set_strings(span: &Span, key: &'static str, values: &[&str]) -> bool {
        if !exported(span) {
            return false;
        }
        let values: Vec<StringValue> = values.iter().map(|v| (*v).to_owned().into()).collect();
        span.set_attribute(key, Value::Array(Array::String(values)));
        true
    }

    pub(super) fn of_span(span: &Span) -> Option<TraceContext> {
        if !exported(span) {
            return None;
        }
        let cx = span.context();
        let context = cx.span().span_context().clone();
        context.is_valid().then(|| write(&context))
    }

    #[cfg(feature = "mcp")]
    pub(super) fn continue_from(span: &Span, parent: &str, state: Option<&str>) {
        if let Some(remote) = read(parent, state, true) {
            let cx = opentelemetry::Context::new().with_remote_span_context(remote);
            // The span may have been entered already (a layer that is not OpenTelemetry's
            // refuses nothing): a failure leaves it in the trace it had.
            let _ = span.set_parent(cx);
        }
    }

    pub(super) fn link(span: &Span, traceparent: &str) {
        if let Some(linked) = read(traceparent, None, false) {
            span.add_link(linked);
        }
    }

    fn write(context: &SpanContext) -> TraceContext {
        let traceparent = format!(
            "{VERSION}-{}-{}-{:02x}",
            context.trace_id(),
            context.span_id(),
            context.trace_flags().to_u8() & TraceFlags::SAMPLED.to_u8()
        );
        let state = context.trace_state().header();
        TraceContext {
            traceparent,
            tracestate: (!state.is_empty()).then_some(state),
        }
    }

    /// The span context a `traceparent` (and `tracestate`) name, per W3C Trace Context: version
    /// `00`, a non-zero 32-hex-digit trace id and 16-hex-digit span id, two hex digits of flags.
    pub(super) fn read(parent: &str, state: Option<&str>, remote: bool) -> Option<SpanContext> {
        let mut parts = parent.trim().split('-');
        let (version, trace, span, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let lower_hex = |s: &str, len: usize| {
            s.len() == len
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        if version != VERSION
            || parts.next().is_some()
            || !lower_hex(trace, 32)
            || !lower_hex(span, 16)
            || !lower_hex(flags, 2)
        {
            return None;
        }
        let trace_id = TraceId::from_hex(trace).ok()?;
        let span_id = SpanId::from_hex(span).ok()?;
        let flags = u8::from_str_radix(flags, 16).ok()?;
        let state = state
            .and_then(|s| s.parse::<TraceState>().ok())
            .unwrap_or_default();
        let context = SpanContext::new(trace_id, span_id, TraceFlags::new(flags), remote, state);
        context.is_valid().then_some(context)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn traceparents_are_read_as_w3c_trace_context_says_k6() {
            let good = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
            let context = read(good, Some("congo=t61rcWkgMzE"), true).expect("valid");
            assert!(context.is_remote() && context.is_sampled());
            let written = write(&context);
            assert_eq!(written.traceparent, good);
            assert_eq!(written.tracestate.as_deref(), Some("congo=t61rcWkgMzE"));
            for bad in [
                "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                "00-00000000000000000000000000000000-b7ad6b7169203331-01",
                "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
                "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x",
            ] {
                assert_eq!(read(bad, None, true), None, "{bad}");
            }
        }
    }
}
