//! K1: what an `after` hook's replacement does to an outcome. A success stays a success whose
//! new text still fits the tool's output schema (O1), one that does not fit fails the call,
//! redacted (E2); the result's images are dropped, so the model reads only what the hook
//! wrote (O3). A failure becomes text the application approved (`rejected`), its error kept
//! (E3). A fatal outcome keeps `the tool failed` and still ends the run (P1).

mod support {
    pub mod agent;
}

use serde::Serialize;
use support::agent::{Args, tool};
use tool_runtime::hook::{After, Hooks, Transport, after_fn};
use tool_runtime::{
    Agent, Context, ErrorKind, Image, Limits, OutcomeKind, Permanent, Relayed, RelayedKind, Schema,
    ScriptedModel, ScriptedTurn, Tool, WithImages,
};

/// A typed result, with an output schema (O1).
#[derive(Serialize, Schema)]
struct Window {
    /// When it starts.
    starts_at: String,
}

fn window() -> Tool {
    Tool::builder("window", "Finds the next window.")
        .structured_handler(|_ctx: Context, _args: Args| async move {
            Ok::<_, std::io::Error>(Window {
                starts_at: "2026-12-01T02:00:00Z".to_owned(),
            })
        })
        .build()
}

/// Hooks that replace every text with `text`.
fn replacing(text: &'static str) -> Hooks {
    Hooks::new(Transport::Mcp).with(after_fn(move |_call, _outcome| After::replace(text)))
}

async fn call(hooks: &Hooks, tool: &Tool) -> tool_runtime::Outcome {
    hooks
        .invoke(tool, &Context::new(), b"{}", &Limits::default())
        .await
}

#[tokio::test]
async fn k1_o1_a_replaced_result_must_still_fit_the_output_schema() {
    let fits = call(&replacing(r#"{"starts_at":"soon"}"#), &window()).await;
    assert_eq!(fits.kind(), OutcomeKind::Success);
    assert_eq!(fits.text(), r#"{"starts_at":"soon"}"#);

    let breaks = call(&replacing("soon"), &window()).await;
    assert_eq!(breaks.kind(), OutcomeKind::Failed);
    assert_eq!(breaks.text(), "the tool failed");
    let error = breaks.error().expect("the application reads why");
    assert_eq!(error.kind(), ErrorKind::Handler);
    assert!(error.message().contains("does not fit its output schema"));
}

#[tokio::test]
async fn k1_o3_a_replaced_result_drops_its_images() {
    let chart = Tool::builder("chart", "Charts the load.")
        .handler(|_ctx: Context, _args: Args| async move {
            Ok::<_, std::io::Error>(
                WithImages::new("the load").image(Image::png(vec![0x89, 0x50, 0x4e, 0x47])),
            )
        })
        .build();
    let plain = Hooks::new(Transport::Agent);
    assert_eq!(call(&plain, &chart).await.images().len(), 1);

    let replaced = call(&replacing("a chart, withheld"), &chart).await;
    assert_eq!(replaced.kind(), OutcomeKind::Success);
    assert_eq!(replaced.text(), "a chart, withheld");
    assert!(replaced.images().is_empty());
}

#[tokio::test]
async fn k1_e3_a_replaced_failure_is_approved_text_and_keeps_its_error() {
    let failing = tool("failing", |_ctx, _args: Args| async move {
        Err::<String, _>(std::io::Error::other("secret: hunter2"))
    });
    // A relayed kind with a fixed text (T2) is replaced the same way.
    let relayed = tool("relayed", |_ctx, _args: Args| async move {
        Err::<String, _>(Relayed::new(RelayedKind::Unavailable))
    });
    let hooks = replacing("Try again later.");
    for tool in [failing, relayed] {
        let outcome = call(&hooks, &tool).await;
        assert_eq!(outcome.kind(), OutcomeKind::Rejected, "{}", tool.name());
        assert_eq!(outcome.text(), "Try again later.");
        assert!(
            outcome.error().is_some(),
            "{}: kept for the application",
            tool.name()
        );
    }
}

#[tokio::test]
async fn k1_p1_a_fatal_outcome_keeps_its_text_and_ends_the_run() {
    let doom = tool("doom", |_ctx, _args: Args| async move {
        Err::<String, _>(Permanent::new(std::io::Error::other("the disk is on fire")))
    });
    let outcome = call(&replacing("All is well."), &doom).await;
    assert_eq!(outcome.kind(), OutcomeKind::Fatal);
    assert_eq!(outcome.text(), "the tool failed");

    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "doom", "{}"),
        ScriptedTurn::reply("never sent"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(doom)
        .hook(after_fn(|_call, _outcome| After::replace("All is well.")))
        .build()
        .unwrap();
    let err = agent.run(&Context::new(), "go").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Permanent);
    assert_eq!(model.request_count(), 1);
    assert_eq!(err.transcript().last().unwrap().text(), "the tool failed");
}
