//! Spans as a test sees them (K2): a `tracing-subscriber` layer that keeps every span with its
//! `tracing` name, its parent and its fields (later records included), installed for the
//! current thread (use a current-thread runtime, so that every task records here).
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::DefaultGuard;
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::{LookupSpan, Registry};

/// One span: its id, `tracing` name, parent span's id and fields.
#[derive(Debug, Clone)]
pub struct SpanRecord {
    pub id: u64,
    pub name: &'static str,
    pub parent: Option<u64>,
    pub fields: BTreeMap<String, String>,
}

impl SpanRecord {
    /// The field `name`, as text.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }

    /// The field `name`, which must be there.
    #[track_caller]
    pub fn field(&self, name: &str) -> &str {
        self.get(name)
            .unwrap_or_else(|| panic!("span {} has no field {name}: {:?}", self.name, self.fields))
    }
}

/// Every span made while installed, and every event's fields.
#[derive(Clone, Default)]
pub struct Spans {
    spans: Arc<Mutex<Vec<SpanRecord>>>,
    events: Arc<Mutex<Vec<BTreeMap<String, String>>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S> Layer<S> for Spans
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let parent = ctx
            .span(id)
            .and_then(|span| span.parent())
            .map(|parent| parent.id().into_u64());
        self.spans.lock().expect("not poisoned").push(SpanRecord {
            id: id.into_u64(),
            name: attrs.metadata().name(),
            parent,
            fields,
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.spans.lock().expect("not poisoned");
        // Ids are reused once a span closes: the latest span with this id is the one.
        if let Some(span) = spans.iter_mut().rev().find(|s| s.id == id.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.events.lock().expect("not poisoned").push(fields);
    }
}

impl Spans {
    /// Records every span and event of the current thread until the guard is dropped.
    pub fn install(&self) -> DefaultGuard {
        super::trace::install(Registry::default().with(self.clone()))
    }

    /// Every span so far, in creation order.
    pub fn all(&self) -> Vec<SpanRecord> {
        self.spans.lock().expect("not poisoned").clone()
    }

    /// The spans with this `tracing` name.
    pub fn named(&self, name: &str) -> Vec<SpanRecord> {
        self.all().into_iter().filter(|s| s.name == name).collect()
    }

    /// The one span with this `tracing` name.
    #[track_caller]
    pub fn one(&self, name: &str) -> SpanRecord {
        let mut found = self.named(name);
        assert_eq!(found.len(), 1, "spans named {name}: {found:?}");
        found.remove(0)
    }

    /// Whether any span field or event field holds `text`.
    pub fn mention(&self, text: &str) -> bool {
        let in_spans = self
            .all()
            .iter()
            .any(|s| s.fields.values().any(|v| v.contains(text)));
        let in_events = self
            .events
            .lock()
            .expect("not poisoned")
            .iter()
            .any(|f| f.values().any(|v| v.contains(text)));
        in_spans || in_events
    }

    /// Whether any span field holds `text` (events aside: E3 logs what is redacted).
    pub fn in_span_fields(&self, text: &str) -> bool {
        self.all()
            .iter()
            .any(|s| s.fields.values().any(|v| v.contains(text)))
    }
}
