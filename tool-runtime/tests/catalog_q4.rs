//! Repair of malformed arguments (Q4): off unless asked; when asked, arguments that are not
//! JSON are repaired before validation, the repaired text is validated like any arguments,
//! and the call's record keeps what the model sent. Arguments that are JSON are untouched.

mod support {
    pub mod agent;
}

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use serde_json::{Value, json};
use tool_runtime::{
    Agent, Context, LenientJson, OutcomeKind, RepairArguments, ScriptedModel, ScriptedTurn, Tool,
};

/// `get-weather`, taking a required string `city`, counting its runs.
fn weather() -> (Tool, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": false,
    });
    let check = |v: &Value, cx: &mut tool_runtime::violation::ParseCx| {
        if !v.get("city").is_some_and(Value::is_string) {
            cx.violate_at(
                "city",
                tool_runtime::Rule::Required,
                "is required: a string",
            );
        }
    };
    let tool = Tool::builder("get-weather", "Finds the weather.")
        .dynamic_handler(schema, check, move |_ctx: Context, args: Value| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, std::convert::Infallible>(args) }
        })
        .build();
    (tool, runs)
}

async fn one_call(arguments: &str, repair: bool) -> (tool_runtime::CallRecord, usize) {
    let (tool, runs) = weather();
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "get-weather", arguments),
        ScriptedTurn::reply("done"),
    ]);
    let mut builder = Agent::builder(model).tool(tool);
    if repair {
        builder = builder.repair_arguments(LenientJson);
    }
    let agent = builder.build().expect("the agent builds");
    let out = agent
        .run(&Context::new(), "go")
        .await
        .expect("the run answers");
    (out.calls[0].clone(), runs.load(Ordering::SeqCst))
}

#[tokio::test]
async fn q4_repair_is_off_unless_asked() {
    let (record, runs) = one_call("{'city': 'Paris',}", false).await;
    assert_eq!(record.kind(), OutcomeKind::InvalidArguments);
    assert_eq!(record.repaired_from, None);
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn q4_repaired_arguments_run_and_the_record_keeps_what_the_model_sent() {
    let sent = "```json\n{city: 'Paris',}\n```";
    let (record, runs) = one_call(sent, true).await;
    assert_eq!(record.kind(), OutcomeKind::Success);
    assert_eq!(record.repaired_from.as_deref(), Some(sent));
    let parsed: Value = serde_json::from_str(&record.arguments).unwrap();
    assert_eq!(parsed, json!({"city": "Paris"}));
    assert_eq!(runs, 1);
}

#[tokio::test]
async fn q4_repaired_arguments_are_validated_like_any_others() {
    let (record, runs) = one_call("{city: 3,}", true).await;
    assert_eq!(record.kind(), OutcomeKind::InvalidArguments);
    assert!(record.repaired_from.is_some(), "repaired, then refused");
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn q4_arguments_that_are_json_are_never_repaired() {
    let (record, runs) = one_call(r#"{"city": "Oslo"}"#, true).await;
    assert_eq!(record.kind(), OutcomeKind::Success);
    assert_eq!(record.repaired_from, None);
    assert_eq!(record.arguments, r#"{"city": "Oslo"}"#);
    assert_eq!(runs, 1);
}

proptest! {
    // Q4: any text, and JSON mangled as models mangle it: the repair never panics, and what
    // it returns is JSON whose length is linear in the input's.
    #[test]
    fn q4_the_default_repair_never_panics_and_returns_only_json(text in ".{0,200}") {
        if let Some(fixed) = LenientJson.repair(&text) {
            prop_assert!(serde_json::from_str::<Value>(&fixed).is_ok(), "{fixed}");
            prop_assert!(fixed.len() <= 3 * text.len() + 16);
        }
    }

    #[test]
    fn q4_mangled_json_objects_come_back_equal(
        map in proptest::collection::btree_map("[a-z]{1,8}", "[a-zA-Z0-9 ]{0,12}", 0..6),
        cut_brace in any::<bool>(),
    ) {
        let original = serde_json::to_value(&map).unwrap();
        let members: Vec<String> = map.iter().map(|(k, v)| format!("{k}: '{v}', ")).collect();
        let mut mangled = format!("{{{}", members.concat());
        if !cut_brace {
            mangled.push('}');
        }
        let fixed = LenientJson.repair(&mangled).unwrap();
        prop_assert_eq!(serde_json::from_str::<Value>(&fixed).unwrap(), original);
    }
}
