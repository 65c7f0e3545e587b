//! Everything `tracing` says during a test, as text (Z2, Z4: no token may appear in it): the
//! fields of every span (later records included) and of every event, at every level,
//! installed for the current thread (use a current-thread runtime, so that every task
//! records here).
#![allow(dead_code, unreachable_pub)]

use std::fmt::{self, Write as _};
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::DefaultGuard;
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::Registry;

/// The text of every span and event so far.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<String>>);

impl Captured {
    /// Starts capturing on this thread, until the guard is dropped.
    pub fn install() -> (Self, DefaultGuard) {
        let captured = Self::default();
        let layer = Capture(captured.clone());
        let guard = super::trace::install(Registry::default().with(layer));
        (captured, guard)
    }

    /// Everything captured.
    pub fn text(&self) -> String {
        self.0.lock().map(|t| t.clone()).unwrap_or_default()
    }

    fn push(&self, what: &str, visit: impl FnOnce(&mut dyn Visit)) {
        let mut line = format!("{what}:");
        visit(&mut Fields(&mut line));
        if let Ok(mut text) = self.0.lock() {
            text.push_str(&line);
            text.push('\n');
        }
    }
}

struct Capture(Captured);

struct Fields<'a>(&'a mut String);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        let _ = write!(self.0, " {}={}", field.name(), value);
    }
}

impl<S: Subscriber> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _ctx: Context<'_, S>) {
        self.0.push(attrs.metadata().name(), |v| attrs.record(v));
    }

    fn on_record(&self, _id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        self.0.push("record", |v| values.record(v));
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        self.0.push(event.metadata().target(), |v| event.record(v));
    }
}
