//! O2: a run asked for a typed answer gets it through the model's native structured output or
//! a final-answer tool, parsed by the answer type's own parser (S2), with violations sent back
//! under the retry budget (L1).

use std::sync::Arc;

use tool_runtime::RunRequest;
use tool_runtime::{
    Agent, Context, ErrorKind, Message, OfflineModel, Rule, Schema, ScriptedModel, ScriptedTurn,
    ToolChoice,
};

/// The answer: when a service is down.
#[derive(Schema, Debug, PartialEq)]
pub struct Downtime {
    /// The service.
    #[schema(pattern = "^svc-[0-9a-z-]+$")]
    pub service_id: String,
    /// How long, in minutes.
    #[schema(range = 1..=600)]
    pub minutes: u32,
}

const GOOD: &str = r#"{"service_id": "svc-42", "minutes": 120}"#;
const BAD: &str = r#"{"service_id": "42", "minutes": 0}"#;

fn expected() -> Downtime {
    Downtime {
        service_id: "svc-42".into(),
        minutes: 120,
    }
}

#[tokio::test]
async fn o2_without_native_output_the_answer_comes_through_a_final_answer_tool() {
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::new().call("a1", "final_answer", BAD),
        ScriptedTurn::new().call("a2", "final_answer", GOOD),
    ]));
    let agent = Agent::builder(Arc::clone(&model)).build().expect("builds");
    let typed = agent
        .execute(
            &Context::new(),
            RunRequest::new("When is svc-42 down?").typed::<Downtime>(),
        )
        .await
        .expect("a typed answer");
    assert_eq!(typed.value, expected());
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["final_answer"]);
    assert_eq!(requests[0].tool_choice, Some(ToolChoice::Required));
    assert_eq!(requests[0].answer, None, "not native");
    // The first answer's violations went back as the tool's result.
    let results = requests[1].tool_results();
    assert_eq!(results.len(), 1);
    assert!(results[0].is_error);
    assert!(results[0].text.contains("/minutes"), "{}", results[0].text);
    assert!(results[0].text.contains("[pattern]"), "{}", results[0].text);
}

#[tokio::test]
async fn o2_with_native_output_the_format_goes_with_each_request_and_text_is_checked() {
    let model = Arc::new(
        ScriptedModel::new([
            ScriptedTurn::reply("not json at all"),
            ScriptedTurn::reply(GOOD),
        ])
        .with_native_answers(),
    );
    let agent = Agent::builder(Arc::clone(&model)).build().expect("builds");
    let typed = agent
        .execute(
            &Context::new(),
            RunRequest::new("When is svc-42 down?").typed::<Downtime>(),
        )
        .await
        .expect("a typed answer");
    assert_eq!(typed.value, expected());
    assert_eq!(typed.output.text, GOOD);
    let requests = model.requests();
    let format = requests[0]
        .answer
        .as_ref()
        .expect("the answer's format is sent");
    assert_eq!(format.name(), "final_answer");
    assert_eq!(
        format.schema()["required"],
        serde_json::json!(["service_id", "minutes"])
    );
    assert!(
        requests[0].tools.is_empty(),
        "no final-answer tool when native"
    );
    // The correction is a user message naming what was wrong.
    let Some(Message::User { text }) = requests[1].messages.last() else {
        panic!("a correction follows the bad answer");
    };
    assert!(text.contains("[syntax]"), "{text}");
}

#[tokio::test]
async fn o2_l1_answers_that_keep_breaking_the_schema_end_the_run() {
    let model = ScriptedModel::new(
        (0..3).map(|i| ScriptedTurn::new().call(format!("a{i}"), "final_answer", BAD)),
    );
    let agent = Agent::builder(model).retries(1).build().expect("builds");
    let error = agent
        .execute(
            &Context::new(),
            RunRequest::new("When?").typed::<Downtime>(),
        )
        .await
        .expect_err("the budget ends the run");
    assert_eq!(error.kind(), ErrorKind::RetriesExhausted);
    assert_eq!(error.tool(), Some("final_answer"));
    let rules: Vec<Rule> = error.violations().iter().map(|v| v.rule).collect();
    assert_eq!(rules, [Rule::Minimum, Rule::Pattern]);
    assert_eq!(error.usage().len(), 2);
    // A model that answers in text where the tool is wanted is told to call it.
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::reply("svc-42, two hours"),
        ScriptedTurn::new().call("a1", "final_answer", GOOD),
    ]));
    let agent = Agent::builder(Arc::clone(&model)).build().expect("builds");
    let typed = agent
        .execute(
            &Context::new(),
            RunRequest::new("When?").typed::<Downtime>(),
        )
        .await
        .expect("answers");
    assert_eq!(typed.value, expected());
    let requests = model.requests();
    let Some(Message::User { text }) = requests[1].messages.last() else {
        panic!("a reminder follows the text");
    };
    assert!(text.contains("final_answer"));
}

#[tokio::test]
async fn o2_the_offline_model_answers_in_the_schema() {
    let agent = Agent::builder(OfflineModel::new()).build().expect("builds");
    let typed = agent
        .execute(
            &Context::new(),
            RunRequest::new("When is svc-42 down?").typed::<Downtime>(),
        )
        .await
        .expect("the offline model answers");
    assert!(typed.value.service_id.starts_with("svc-"));
    assert!((1..=600).contains(&typed.value.minutes));
}

/// L2 in a turn whose final answer does not fit (O2): the turn's other calls are tool calls
/// like any, and when they would cross the limit on calls none runs and the run ends.
#[tokio::test]
async fn o2_l2_the_other_calls_of_a_rejected_answer_keep_the_call_limit() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tool_runtime::{RunOptions, Tool, UsageLimits};

    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let ping = Tool::builder("ping", "Answers pong.")
        .handler(
            move |_ctx: Context, _args: std::collections::BTreeMap<String, serde_json::Value>| {
                let counted = Arc::clone(&counted);
                async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, std::convert::Infallible>("pong")
                }
            },
        )
        .build();
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::new()
        .call("a1", "final_answer", BAD)
        .call("p1", "ping", "{}")
        .call("p2", "ping", "{}")]));
    let agent = Agent::builder(Arc::clone(&model))
        .tool(ping)
        .build()
        .expect("builds");
    let options = RunOptions::new().limits(UsageLimits::new().tool_calls(1));
    let error = agent
        .execute(
            &Context::new(),
            RunRequest::new("When is svc-42 down?")
                .options(options)
                .typed::<Downtime>(),
        )
        .await
        .expect_err("the limit ends the run");
    assert_eq!(error.kind(), ErrorKind::UsageLimit, "{error}");
    assert_eq!(runs.load(Ordering::SeqCst), 0, "no call ran past the limit");
    // Every call of the turn has its result: the transcript stays whole.
    let results = error
        .transcript()
        .iter()
        .filter(|m| matches!(m, Message::Tool(_)))
        .count();
    assert_eq!(results, 3);
}
