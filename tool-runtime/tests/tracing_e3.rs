//! E3 through `tracing`: what is redacted from the model is logged for the application (at
//! `warn`), every run, model request and call has a span (named as K2 says) naming the tool
//! and call id with its outcome, and no span or event carries the arguments' values.

mod support {
    pub mod agent;
    pub mod trace;
}

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use support::agent::{Args, tool};
use tool_runtime::{Agent, Context, ScriptedModel, ScriptedTurn};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

type Fields = Vec<(String, String)>;

#[derive(Default)]
struct Captured {
    next: AtomicU64,
    spans: Mutex<Vec<(u64, &'static str, Fields)>>,
    events: Mutex<Vec<(Level, Fields)>>,
}

/// A subscriber that keeps every span and event with its fields.
#[derive(Clone, Default)]
struct Capture(Arc<Captured>);

struct Visitor<'a>(&'a mut Fields);

impl Visit for Visitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::TRACE)
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.0.next.fetch_add(1, Ordering::SeqCst) + 1;
        let mut fields = Fields::new();
        span.record(&mut Visitor(&mut fields));
        self.0
            .spans
            .lock()
            .expect("not poisoned")
            .push((id, span.metadata().name(), fields));
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.0.spans.lock().expect("not poisoned");
        if let Some((_, _, fields)) = spans.iter_mut().find(|(id, _, _)| *id == span.into_u64()) {
            values.record(&mut Visitor(fields));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::new();
        event.record(&mut Visitor(&mut fields));
        self.0
            .events
            .lock()
            .expect("not poisoned")
            .push((*event.metadata().level(), fields));
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

fn field<'a>(fields: &'a Fields, name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn e3_redacted_failures_are_logged_with_spans_for_each_call_and_no_argument_values() {
    let capture = Capture::default();
    let _guard = support::trace::install(capture.clone());

    let failing = tool("failing", |_ctx, _args: Args| async move {
        Err::<(), _>(std::io::Error::other("SECRET upstream said 403"))
    });
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "failing", r#"{"token": "ARG-VALUE-4242"}"#),
        ScriptedTurn::reply("it failed"),
    ]);
    let agent = Agent::builder(model.clone()).tool(failing).build().unwrap();
    agent.run(&Context::new(), "go").await.unwrap();

    // The model was told only that the tool failed ...
    assert_eq!(
        model.requests()[1].tool_results()[0].text,
        "the tool failed"
    );
    // ... and the application's logs have the cause, at warn.
    let events = capture.0.events.lock().unwrap();
    let warned = events.iter().any(|(level, fields)| {
        *level == Level::WARN
            && fields
                .iter()
                .any(|(_, v)| v.contains("SECRET upstream said 403"))
    });
    assert!(warned, "{events:?}");

    let spans = capture.0.spans.lock().unwrap();
    let named = |name: &str| spans.iter().filter(|(_, n, _)| *n == name).count();
    // The spans are named as the OpenTelemetry GenAI conventions name them (K2).
    assert_eq!(named("invoke_agent"), 1);
    assert_eq!(named("chat"), 2);
    let (_, _, call) = spans.iter().find(|(_, n, _)| *n == "execute_tool").unwrap();
    assert_eq!(field(call, "gen_ai.tool.name"), Some("failing"));
    assert_eq!(field(call, "gen_ai.tool.call.id"), Some("c1"));
    assert_eq!(field(call, "tool_runtime.outcome"), Some("failed"));
    let (_, _, run) = spans.iter().find(|(_, n, _)| *n == "invoke_agent").unwrap();
    assert_eq!(field(run, "tool_runtime.outcome"), Some("answered"));

    // Argument values never reach a span or an event.
    let leaked = spans
        .iter()
        .flat_map(|(_, _, f)| f)
        .chain(events.iter().flat_map(|(_, f)| f))
        .any(|(_, v)| v.contains("ARG-VALUE-4242"));
    assert!(!leaked);
}
