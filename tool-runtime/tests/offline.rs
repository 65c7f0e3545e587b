//! The offline model: arguments generated from real `#[derive(Schema)]` schemas pass the
//! parser (valid mode) or fail it (invalid mode), through the same loop a provider would use.

mod support {
    pub mod agent;
}

use std::sync::{Arc, Mutex};

use tool_runtime::generate::{invalid_arguments, valid_arguments};
use tool_runtime::{
    Agent, Arguments, Context, IntoTool, OfflineModel, OutcomeKind, Schema, Tool, tool,
};

/// How urgent.
#[derive(Schema, Debug)]
#[schema(rename_all = "lowercase")]
enum Priority {
    Low,
    High,
}

/// A drawing instruction.
#[derive(Schema, Debug)]
#[schema(tag = "kind", rename_all = "snake_case")]
#[allow(dead_code)]
enum Shape {
    /// A circle.
    Circle {
        #[schema(min = 0.5)]
        radius: f64,
    },
    Square {
        side: f64,
    },
}

/// Someone to tell.
#[derive(Schema, Debug)]
#[allow(dead_code)]
struct Contact {
    #[schema(format = "email")]
    email: String,
    #[schema(min_len = 2, max_len = 4, pattern = "^[A-Z]+$")]
    initials: String,
}

/// A tree.
#[derive(Schema, Debug)]
#[allow(dead_code)]
struct Node {
    #[schema(range = 1..=9)]
    value: i32,
    children: Vec<Node>,
}

/// Everything a schema can ask for.
#[derive(Schema, Debug)]
#[allow(dead_code)]
struct Everything {
    #[schema(pattern = "^svc-[0-9]{3}$")]
    service: String,
    #[schema(range = 5..=9)]
    level: u8,
    #[schema(exclusive_min = 0.0, max = 1.0, multiple_of = 0.25)]
    ratio: f64,
    #[schema(format = "uuid")]
    id: String,
    #[schema(format = "date-time")]
    at: String,
    priority: Priority,
    shape: Shape,
    #[schema(min_items = 2, max_items = 3, unique_items)]
    tags: Vec<String>,
    contact: Contact,
    note: Option<String>,
    #[schema(one_of = ["fast", "safe"])]
    mode: String,
    #[schema(default = 7, range = 1..=30)]
    days: u32,
    tree: Node,
    extra: serde_json::Value,
}

/// Takes everything.
#[tool(name = "take-everything")]
async fn take_everything(input: Everything) -> String {
    format!("{} at level {}", input.service, input.level)
}

#[tokio::test]
async fn valid_generated_arguments_pass_the_parser_of_a_rich_schema() {
    let tool = TakeEverything.into_tool();
    let args = valid_arguments(tool.schema());
    let outcome = tool
        .invoke(&Context::new(), args.to_string().as_bytes())
        .await;
    assert_eq!(
        outcome.kind(),
        OutcomeKind::Success,
        "{}\n{args:#}",
        outcome.text()
    );
    assert_eq!(outcome.text(), "svc-000 at level 5");
}

#[tokio::test]
async fn invalid_generated_arguments_break_the_schema() {
    let tool = TakeEverything.into_tool();
    let args = invalid_arguments(tool.schema());
    let outcome = tool
        .invoke(&Context::new(), args.to_string().as_bytes())
        .await;
    assert_eq!(outcome.kind(), OutcomeKind::InvalidArguments, "{args:#}");
    assert_eq!(
        outcome.violations().len(),
        1,
        "one clear violation: {}",
        outcome.text()
    );
}

/// A tool that records what it received.
fn recording(name: &str, seen: &Arc<Mutex<Vec<String>>>) -> Tool {
    let seen = Arc::clone(seen);
    let label = name.to_owned();
    Tool::builder(name, "Records its input.")
        .handler(move |_ctx: Context, c: Contact| {
            seen.lock()
                .expect("not poisoned")
                .push(format!("{label}: {}", c.initials));
            async move { Ok::<_, std::io::Error>(format!("told {}", c.email)) }
        })
        .build()
}

#[tokio::test]
async fn the_offline_model_calls_each_advertised_tool_then_sums_up() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let hidden = Tool::builder("hidden", "Never advertised.")
        .handler(|_ctx: Context, c: Contact| async move { Ok::<_, std::io::Error>(c.email) })
        .available_fn(|_ctx: &Context| Ok::<_, std::io::Error>(false))
        .build();
    let agent = Agent::builder(OfflineModel::new())
        .tool(recording("notify", &seen))
        .tool(hidden)
        .tool(TakeEverything)
        .build()
        .unwrap();

    let out = agent.run(&Context::new(), "tell everyone").await.unwrap();

    assert_eq!(out.turns(), 2);
    let called: Vec<_> = out.calls.iter().map(|c| (&*c.name, c.kind())).collect();
    assert_eq!(
        called,
        [
            ("notify", OutcomeKind::Success),
            ("take-everything", OutcomeKind::Success)
        ]
    );
    assert_eq!(*seen.lock().unwrap(), ["notify: AA"]);
    assert_eq!(
        out.text,
        "Offline model: I made 2 tool calls.\n- notify: told user@example.com\n- take-everything: svc-000 at level 5"
    );
    assert!(out.usage.iter().all(|u| u.input_tokens > 0));

    // Deterministic: the same run twice gives the same transcript.
    let again = agent.run(&Context::new(), "tell everyone").await.unwrap();
    assert_eq!(again.transcript, out.transcript);
}

#[tokio::test]
async fn the_offline_model_can_call_a_subset_or_answer_straight_away() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder(OfflineModel::new().call_tools(["second"]))
        .tool(recording("first", &seen))
        .tool(recording("second", &seen))
        .build()
        .unwrap();
    agent.run(&Context::new(), "go").await.unwrap();
    assert_eq!(*seen.lock().unwrap(), ["second: AA"]);

    let agent = Agent::builder(OfflineModel::new().final_text("Nothing to do."))
        .build()
        .unwrap();
    let out = agent.run(&Context::new(), "go").await.unwrap();
    assert_eq!(out.text, "Nothing to do.");
    assert_eq!(out.turns(), 1);
}

#[tokio::test]
async fn invalid_arguments_reach_no_handler_and_the_model_corrects_them() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder(OfflineModel::new().arguments(Arguments::Invalid))
        .tool(recording("notify", &seen))
        .build()
        .unwrap();
    let out = agent.run(&Context::new(), "go").await.unwrap();
    assert_eq!(out.calls[0].kind(), OutcomeKind::InvalidArguments);
    assert!(seen.lock().unwrap().is_empty());
    assert!(out.text.contains("- notify (failed): "), "{}", out.text);

    let agent = Agent::builder(OfflineModel::new().arguments(Arguments::InvalidThenValid))
        .tool(recording("notify", &seen))
        .build()
        .unwrap();
    let out = agent.run(&Context::new(), "go").await.unwrap();
    let kinds: Vec<_> = out.calls.iter().map(|c| (c.turn, c.kind())).collect();
    assert_eq!(
        kinds,
        [
            (1, OutcomeKind::InvalidArguments),
            (2, OutcomeKind::Success)
        ]
    );
    assert_eq!(*seen.lock().unwrap(), ["notify: AA"]);
    assert_eq!(out.turns(), 3);
}
