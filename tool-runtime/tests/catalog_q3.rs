//! Input examples (Q3): every example is parsed by the tool's own input parser when the tool
//! is built, and one it refuses makes the tool unusable (D2); a provider without a field for
//! examples reads them in the description (V4).

use serde_json::{Value, json};
use tool_runtime::{Agent, Context, DeclarationError, Schema, Tool};

/// The input of the weather tool: a city, and how many days ahead (1 to 7).
#[derive(Debug, Schema)]
struct Forecast {
    /// The city.
    city: String,
    /// How many days ahead.
    #[schema(range = 1..=7)]
    days: Option<u8>,
}

fn weather(examples: Vec<Value>) -> Tool {
    Tool::builder("get-weather", "Finds the weather forecast.")
        .examples(examples)
        .handler(|_ctx: Context, input: Forecast| async move {
            Ok::<_, std::convert::Infallible>(format!("{} {:?}", input.city, input.days))
        })
        .build()
}

#[test]
fn q3_examples_the_input_accepts_make_a_sound_tool() {
    let tool = weather(vec![
        json!({"city": "Paris"}),
        json!({"city": "Oslo", "days": 3}),
    ]);
    assert!(tool.declaration_error().is_none());
    assert_eq!(tool.examples().len(), 2);
}

#[test]
fn q3_an_example_the_input_refuses_makes_the_tool_unusable() {
    for (bad, index) in [
        (json!({"days": 2}), 1),
        (json!({"city": "Paris", "days": 9}), 1),
        (json!({"city": 7}), 1),
        (json!({"city": "Paris", "extra": true}), 1),
    ] {
        let tool = weather(vec![json!({"city": "Paris"}), bad.clone()]);
        match tool.declaration_error() {
            Some(DeclarationError::InvalidExample { index: at, .. }) => {
                assert_eq!(*at, index, "{bad}");
            }
            other => panic!("{bad}: expected an invalid example, got {other:?}"),
        }
        let model = tool_runtime::ScriptedModel::new([]);
        assert!(Agent::builder(model).tool(tool).build().is_err(), "{bad}");
    }
}

#[cfg(feature = "openai")]
#[test]
fn q3_v4_openai_reads_the_examples_in_the_description() {
    use tool_runtime::Model;
    use tool_runtime::providers::openai::OpenAiChat;

    let driver = OpenAiChat::builder()
        .api_key("sk-test-key")
        .base_url("http://127.0.0.1:9/v1")
        .model("gpt-test")
        .build()
        .expect("a valid configuration");
    let spec = driver
        .tool_spec(&weather(vec![json!({"city": "Paris"})]))
        .expect("a spec");
    let wire: Value = serde_json::from_str(spec.wire("openai.chat").expect("rendered")).unwrap();
    let description = wire["function"]["description"].as_str().unwrap();
    assert_eq!(
        description,
        "Finds the weather forecast.\n\nExamples of input:\n{\"city\":\"Paris\"}"
    );
    let plain = driver.tool_spec(&weather(vec![])).expect("a spec");
    let wire: Value = serde_json::from_str(plain.wire("openai.chat").expect("rendered")).unwrap();
    assert_eq!(
        wire["function"]["description"],
        "Finds the weather forecast."
    );
}
