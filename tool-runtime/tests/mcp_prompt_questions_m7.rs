//! M7 and M3 (a prompt that asks): a prompt's handler asks its user through its context as a
//! tool's does (`ctx.elicit_named::<T>`, `T: Schema`, here in a `#[prompt]` fn). On protocol
//! 2026-07-28 the question ends the `prompts/get` with `input_required` (the question under its
//! key, a sealed `requestState`); the client gets the prompt again with its answer, and the
//! handler, run again, gets the typed answer and the client the prompt. The state is bound to
//! the prompt and its arguments and counts once (H10): forged, altered, replayed, brought for
//! other arguments or another prompt, or huge, it is `-32602` and the handler's answer never
//! reaches the client. A client that can answer nothing is not asked: the handler is told
//! (`ElicitError::Unsupported`). Raw JSON-RPC over a pipe.
#![cfg(feature = "mcp")]

#[path = "support/raw_pipe.rs"]
mod raw_pipe;

mod support {
    pub mod mcp;
}

use raw_pipe::{Raw as RawPipe, meta_2026};
use serde_json::{Value, json};
use tool_runtime::elicit::{ElicitAnswer, ElicitError, Elicited};
use tool_runtime::mcp::{McpServer, McpToolset, Message, prompt};
use tool_runtime::{Context, Schema, ToolError};

/// The arguments of `plan`.
#[derive(Schema, Debug)]
struct Service {
    /// The service to plan for.
    service: String,
}

/// What `plan` asks its user.
#[derive(Schema, Debug)]
struct Window {
    /// When the window opens.
    start: String,
}

/// Plans a maintenance window, asking its user when it opens.
#[prompt(name = "plan")]
async fn plan(ctx: Context, args: Service) -> Result<Vec<Message>, ToolError> {
    let asked = ctx.elicit_named::<Window>("window", "When does the window open?");
    let text = match asked.await {
        Ok(Elicited::Accepted(window)) => format!("Plan {} at {}.", args.service, window.start),
        Ok(_) => format!("Plan {} whenever.", args.service),
        Err(ElicitError::Unsupported) => format!("Plan {}; nobody to ask.", args.service),
        Err(error) => return Err(ToolError::new(format!("the question failed: {error}"))),
    };
    Ok(vec![Message::user(text)])
}

/// How many runs of `patient` saw their get cancelled after their question.
static TOLD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Asks, and says whether its get was cancelled when its question ended it.
#[prompt(name = "patient")]
async fn patient(ctx: Context, args: Service) -> Result<Vec<Message>, ToolError> {
    let asked = ctx.elicit_named::<Window>("window", "When does the window open?");
    if let Ok(Elicited::Cancelled) = asked.await {
        // P2: the handler is told its get ended with its question, and may tidy up.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        if ctx.is_cancelled() {
            TOLD.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    Ok(vec![Message::user(args.service)])
}

/// Another prompt that asks the same question.
#[prompt(name = "other")]
async fn other(ctx: Context, args: Service) -> Result<Vec<Message>, ToolError> {
    plan(ctx, args).await
}

fn server() -> McpServer {
    McpServer::builder()
        .prompt(Plan)
        .prompt(Other)
        .prompt(Patient)
        .build()
        .expect("built")
}

/// A client speaking newline-delimited JSON-RPC over a pipe, without a session.
struct Raw(RawPipe);

impl Raw {
    fn open(server: McpServer) -> Self {
        Self(RawPipe::unopened(server))
    }

    /// `prompts/get` of `name` for `service` on 2026-07-28, by a client that declared
    /// `capabilities`, with `extra` params; the answer.
    async fn get(&mut self, name: &str, service: &str, capabilities: Value, extra: Value) -> Value {
        let mut params = json!({
            "name": name,
            "arguments": {"service": service},
            "_meta": meta_2026("m7", capabilities),
        });
        for (key, value) in extra.as_object().into_iter().flatten() {
            params[key] = value.clone();
        }
        self.0.answer("prompts/get", params).await
    }

    /// Gets `plan` for `service` on 2026-07-28 and returns the state of the question it asks.
    async fn asked(&mut self, service: &str) -> String {
        let answer = self.get("plan", service, asking(), json!({})).await;
        let result = &answer["result"];
        assert_eq!(result["resultType"], "input_required", "{answer}");
        let request = &result["inputRequests"]["window"];
        assert_eq!(request["method"], "elicitation/create", "{answer}");
        assert_eq!(
            request["params"]["requestedSchema"]["properties"]["start"]["type"], "string",
            "{answer}"
        );
        result["requestState"]
            .as_str()
            .expect("a requestState")
            .to_owned()
    }
}

/// The capabilities of a client that answers questions.
fn asking() -> Value {
    json!({"elicitation": {}})
}

/// The answer `start` to the question `window`, with `state`.
fn answering(state: &str, start: &str) -> Value {
    json!({
        "requestState": state,
        "inputResponses": {"window": {"action": "accept", "content": {"start": start}}},
    })
}

/// The text of a complete prompt.
fn text(answer: &Value) -> &str {
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    answer["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text message: {answer}"))
}

/// M7, M3 on 2026-07-28: the prompt's question comes in the answer of `prompts/get`, and the
/// prompt once the client answers it, the typed answer in it.
#[tokio::test]
async fn m7_a_prompt_asks_its_user_in_its_answer_and_gets_the_typed_answer() {
    let mut raw = Raw::open(server());
    let state = raw.asked("db-1").await;
    let answer = raw
        .get("plan", "db-1", asking(), answering(&state, "02:00"))
        .await;
    assert_eq!(text(&answer), "Plan db-1 at 02:00.");
}

/// H10 for prompts: a state counts once, for its prompt and its arguments only; forged,
/// altered or huge, it is refused, and the answer it brings reaches nobody.
#[tokio::test]
async fn h10_a_prompts_state_is_sealed_to_it_and_counts_once() {
    let mut raw = Raw::open(server());
    let state = raw.asked("db-1").await;
    let mut altered = state.clone();
    altered.pop();
    altered.push(if state.ends_with('A') { 'B' } else { 'A' });
    let huge = "tre.".to_owned() + &"A".repeat(1 << 20);
    for (name, service, state) in [
        ("plan", "db-2", state.as_str()),
        ("other", "db-1", state.as_str()),
        ("plan", "db-1", altered.as_str()),
        ("plan", "db-1", "forged"),
        ("plan", "db-1", huge.as_str()),
    ] {
        let answer = raw
            .get(name, service, asking(), answering(state, "never"))
            .await;
        assert_eq!(
            answer["error"]["code"], -32602,
            "{name} {service}: {answer}"
        );
        assert!(!answer.to_string().contains("never"), "{answer}");
    }
    let answer = raw
        .get("plan", "db-1", asking(), answering(&state, "02:00"))
        .await;
    assert_eq!(text(&answer), "Plan db-1 at 02:00.");
    let replayed = raw
        .get("plan", "db-1", asking(), answering(&state, "03:00"))
        .await;
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
}

/// M3: a client that declared no elicitation is not asked: the handler is told nobody can
/// answer.
#[tokio::test]
async fn m3_a_prompt_nobody_can_answer_is_told_so() {
    let mut raw = Raw::open(server());
    let answer = raw.get("plan", "db-1", json!({}), json!({})).await;
    assert_eq!(text(&answer), "Plan db-1; nobody to ask.");
}

/// M7, M3 before 2026-07-28: a prompt's handler asks during the get (`elicitation/create` on
/// the session), as a tool's does during its call; our client's elicitor answers, and the
/// prompt carries the typed answer. A client without an elicitor declares none, and the
/// handler is told nobody can be asked.
#[tokio::test]
async fn m7_m3_before_2026_07_28_a_prompt_asks_during_the_get() {
    for (answers, said) in [
        (true, "Plan billing at 02:00."),
        (false, "Plan billing; nobody to ask."),
    ] {
        let mut builder = McpToolset::builder();
        if answers {
            builder = builder.elicitor(|message: String, _schema: Value| async move {
                assert_eq!(message, "When does the window open?");
                Ok(ElicitAnswer::Accept(json!({"start": "02:00"})))
            });
        }
        let remote = support::mcp::connect_in_process_with(server(), builder).await;
        let messages = (remote.get_prompt("plan", [("service", "billing")]))
            .await
            .expect("the prompt");
        remote.close().await;
        assert_eq!(messages.first().and_then(Message::text), Some(said));
    }
}

/// M7, P2: a prompt's handler whose question ends the get (2026-07-28) is cancelled and
/// awaited, as a tool's is: it sees its context cancelled and ends before the answer goes out.
#[tokio::test]
async fn m7_p2_a_prompt_whose_question_ends_the_get_is_cancelled_and_awaited() {
    let mut raw = Raw::open(server());
    let answer = raw.get("patient", "db-1", asking(), json!({})).await;
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    assert_eq!(TOLD.load(std::sync::atomic::Ordering::SeqCst), 1);
}
