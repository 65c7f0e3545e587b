//! M7 (prompts and completion): an `McpServer` serves prompts whose arguments are a typed
//! input, validated like a tool's (S2) before the handler runs; their messages carry text,
//! images and embedded resources; a hidden prompt answers as an unknown one (A5); a
//! handler's failure is redacted (E2); `completion/complete` suggests values for a prompt's
//! argument (from its completer, or from an enum field's values) and for a template's
//! variable, and nothing for what the caller is not offered. Raw JSON-RPC over a pipe.
#![cfg(feature = "mcp")]

#[path = "support/raw_pipe.rs"]
mod raw_pipe;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use raw_pipe::Raw;
use serde_json::{Value, json};
use tool_runtime::agent::BuildProblem;
use tool_runtime::mcp::{CatalogProblem, Icon, McpPrompt, McpResource, McpServer, Message};
use tool_runtime::outcome::{Image, Resource};
use tool_runtime::{Context, Schema, ToolError};

/// JSON-RPC's `Invalid params`.
const INVALID_PARAMS: i64 = -32602;

/// Who asks.
#[derive(Clone, Copy)]
struct Operator(bool);

/// How urgent a plan is.
#[derive(Schema)]
#[schema(rename_all = "lowercase")]
enum Urgency {
    /// Whenever.
    Low,
    /// Soon.
    High,
    /// Now.
    Halt,
}

/// The arguments of `plan-maintenance`.
#[derive(Schema)]
struct Plan {
    /// The service identifier.
    #[schema(min_len = 1, max_len = 64, pattern = "^[a-z0-9-]+$")]
    service: String,
    /// How many days ahead.
    #[schema(default = 7, range = 1..=30)]
    days: u32,
    /// How urgent.
    urgency: Option<Urgency>,
}

fn server(operator: bool) -> (McpServer, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let plan = McpPrompt::builder("plan-maintenance", "Plan a service's maintenance.")
        .title("Plan maintenance")
        .icon(Icon::new("data:image/png;base64,AA==").with_size("16x16"))
        .get_typed(move |_ctx: Context, p: Plan| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move {
                let urgent = matches!(p.urgency, Some(Urgency::High | Urgency::Halt));
                Ok::<_, ToolError>(vec![
                    Message::user(format!(
                        "Plan maintenance of {} within {} days.",
                        p.service, p.days
                    )),
                    Message::assistant(if urgent {
                        "At once."
                    } else {
                        "In the next window."
                    }),
                ])
            }
        })
        .complete("service", |_ctx: Context, typed: String| async move {
            Ok::<_, ToolError>(
                ["db-1", "db-2", "web-1"]
                    .into_iter()
                    .filter(|s| s.starts_with(&typed))
                    .map(str::to_owned)
                    .collect(),
            )
        })
        .build();
    let rich = McpPrompt::builder("review-diagram", "Review a diagram and its notes.")
        .get(|_ctx: Context| async {
            Ok::<_, ToolError>(vec![
                Message::user_image(Image::png(vec![0x89, b'P', b'N', b'G'])),
                Message::user_resource(Resource::text("docs://notes", "text/plain", "the notes")),
            ])
        })
        .build();
    let hidden = McpPrompt::builder("incident-review", "Review an incident.")
        .available_fn(|ctx: &Context| {
            Ok::<_, ToolError>(ctx.get::<Operator>().is_some_and(|o| o.0))
        })
        .get(|_ctx: Context| async { Ok::<_, ToolError>(vec![Message::user("Review it.")]) })
        .complete("any", |_ctx: Context, _typed: String| async {
            Ok::<_, ToolError>(vec!["secret-suggestion".to_owned()])
        })
        .build();
    let failing = McpPrompt::builder("failing", "Fails.")
        .get(|_ctx: Context| async {
            Err::<Vec<Message>, _>(std::io::Error::other("token hunter2 expired"))
        })
        .build();
    let server = McpServer::builder()
        .context(
            move |_req| async move { Ok::<_, ToolError>(Context::new().with(Operator(operator))) },
        )
        .prompt(plan)
        .prompt(rich)
        .prompt(hidden)
        .prompt(failing)
        .resource(
            McpResource::builder("maint://{service}/history", "history")
                .read_typed(|_ctx: Context, p: Plan| async move { Ok::<_, ToolError>(p.service) })
                .build(),
        )
        .build()
        .expect("the server builds");
    (server, runs)
}

async fn open(operator: bool) -> (Raw, Arc<AtomicUsize>) {
    let (server, runs) = server(operator);
    (Raw::open(server, "2025-11-25").await, runs)
}

async fn get(raw: &mut Raw, name: &str, arguments: Value) -> Value {
    raw.request("prompts/get", json!({"name": name, "arguments": arguments}))
        .await
        .0
}

fn code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error: {answer}"))
}

/// M7, A2: the list shows each offered prompt with its arguments from its type's fields.
#[tokio::test]
async fn m7_prompts_are_listed_with_their_typed_arguments() {
    let (mut raw, _) = open(false).await;
    let (listed, _) = raw.request("prompts/list", json!({})).await;
    let prompts = listed["result"]["prompts"].as_array().expect("prompts");
    let names: Vec<&str> = prompts.iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(
        names,
        ["plan-maintenance", "review-diagram", "failing"],
        "{listed}"
    );
    let plan = &prompts[0];
    assert_eq!(plan["title"], "Plan maintenance");
    assert_eq!(plan["icons"][0]["sizes"], json!(["16x16"]));
    // In the rendered schema's order: by name unless serde_json keeps the order of keys.
    let mut arguments: Vec<Value> = plan["arguments"].as_array().expect("arguments").clone();
    arguments.sort_by_key(|a| a["name"].as_str().unwrap_or_default().to_owned());
    assert_eq!(
        arguments,
        [
            json!({"name": "days", "description": "How many days ahead.", "required": false}),
            json!({"name": "service", "description": "The service identifier.", "required": true}),
            json!({"name": "urgency", "description": "How urgent.", "required": false}),
        ],
        "{listed}"
    );
    assert!(
        prompts[1].get("arguments").is_none(),
        "no arguments: {listed}"
    );
    assert_eq!(listed["result"]["cacheScope"], "private");
    let (mut operator, _) = open(true).await;
    let (listed, _) = operator.request("prompts/list", json!({})).await;
    assert!(listed.to_string().contains("incident-review"), "{listed}");
}

/// M7, S2: arguments arrive as strings and are read by their type (`days` a number), with
/// defaults applied; the messages follow.
#[tokio::test]
async fn m7_a_prompt_gets_its_validated_typed_arguments() {
    let (mut raw, runs) = open(false).await;
    let answer = get(
        &mut raw,
        "plan-maintenance",
        json!({"service": "db-1", "days": "3", "urgency": "halt"}),
    )
    .await;
    let messages = &answer["result"]["messages"];
    assert_eq!(messages[0]["role"], "user", "{answer}");
    assert_eq!(
        messages[0]["content"]["text"],
        "Plan maintenance of db-1 within 3 days."
    );
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"]["text"], "At once.");
    assert_eq!(
        answer["result"]["description"],
        "Plan a service's maintenance."
    );
    let defaulted = get(&mut raw, "plan-maintenance", json!({"service": "db-2"})).await;
    assert_eq!(
        defaulted["result"]["messages"][0]["content"]["text"],
        "Plan maintenance of db-2 within 7 days.",
        "{defaulted}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

/// M7, S2: a missing, mistyped or unknown argument is answered with every violation; the
/// handler does not run.
#[tokio::test]
async fn m7_bad_prompt_arguments_are_invalid_params() {
    let (mut raw, runs) = open(false).await;
    let missing = get(&mut raw, "plan-maintenance", json!({})).await;
    assert_eq!(code(&missing), INVALID_PARAMS, "{missing}");
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("/service"),
        "{missing}"
    );
    let wrong = get(
        &mut raw,
        "plan-maintenance",
        json!({"service": "DB 1", "days": "soon", "extra": "x"}),
    )
    .await;
    let message = wrong["error"]["message"].as_str().unwrap_or_default();
    for pointer in ["/service", "/days", "/extra"] {
        assert!(message.contains(pointer), "{pointer}: {wrong}");
    }
    let not_an_object = raw
        .request(
            "prompts/get",
            json!({"name": "plan-maintenance", "arguments": [1]}),
        )
        .await
        .0;
    assert!(not_an_object.get("error").is_some(), "{not_an_object}");
    let none_taken = get(&mut raw, "review-diagram", json!({"unexpected": "1"})).await;
    assert_eq!(code(&none_taken), INVALID_PARAMS, "{none_taken}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

/// M7: an image and an embedded resource go as MCP content of their own.
#[tokio::test]
async fn m7_prompt_messages_carry_images_and_embedded_resources() {
    let (mut raw, _) = open(false).await;
    let answer = get(&mut raw, "review-diagram", json!({})).await;
    let messages = &answer["result"]["messages"];
    assert_eq!(messages[0]["content"]["type"], "image", "{answer}");
    assert_eq!(messages[0]["content"]["mimeType"], "image/png");
    assert_eq!(messages[0]["content"]["data"], "iVBORw==");
    assert_eq!(messages[1]["content"]["type"], "resource");
    assert_eq!(messages[1]["content"]["resource"]["uri"], "docs://notes");
    assert_eq!(messages[1]["content"]["resource"]["text"], "the notes");
}

/// M7, A5, E2: an unknown prompt, a hidden one and a huge name get one answer that echoes
/// nothing; a handler's failure is `the prompt failed`.
#[tokio::test]
async fn m7_unknown_hidden_and_failing_prompts_are_clear_errors() {
    let (mut raw, _) = open(false).await;
    let unknown = get(&mut raw, "no-such-prompt", json!({})).await;
    let hidden = get(&mut raw, "incident-review", json!({})).await;
    let huge = get(&mut raw, &"p".repeat(1 << 20), json!({})).await;
    assert_eq!(code(&unknown), INVALID_PARAMS, "{unknown}");
    assert_eq!(hidden["error"], unknown["error"], "{hidden}");
    assert_eq!(huge["error"], unknown["error"]);
    let failed = get(&mut raw, "failing", json!({})).await;
    assert_eq!(failed["error"]["message"], "the prompt failed", "{failed}");
    assert!(!failed.to_string().contains("hunter2"));
}

/// M7: completion of a prompt's argument by its completer, of an enum argument from its
/// values, of a template's variable; a hidden prompt completes nothing.
#[tokio::test]
async fn m7_completion_of_prompt_and_template_arguments() {
    let (mut raw, _) = open(false).await;
    let complete = |reference: Value, name: &str, value: &str| json!({"ref": reference, "argument": {"name": name, "value": value}});
    let prompt = json!({"type": "ref/prompt", "name": "plan-maintenance"});
    let (db, _) = raw
        .request(
            "completion/complete",
            complete(prompt.clone(), "service", "db"),
        )
        .await;
    assert_eq!(
        db["result"]["completion"]["values"],
        json!(["db-1", "db-2"]),
        "{db}"
    );
    assert_eq!(db["result"]["completion"]["hasMore"], false);
    let (urgency, _) = raw
        .request("completion/complete", complete(prompt, "urgency", "h"))
        .await;
    assert_eq!(
        urgency["result"]["completion"]["values"],
        json!(["high", "halt"]),
        "{urgency}"
    );
    let template = json!({"type": "ref/resource", "uri": "maint://{service}/history"});
    let (none, _) = raw
        .request("completion/complete", complete(template, "service", "d"))
        .await;
    assert_eq!(none["result"]["completion"]["values"], json!([]), "{none}");
    let hidden = json!({"type": "ref/prompt", "name": "incident-review"});
    let (refused, _) = raw
        .request("completion/complete", complete(hidden, "any", ""))
        .await;
    assert_eq!(code(&refused), INVALID_PARAMS, "{refused}");
    assert!(!refused.to_string().contains("secret-suggestion"));
    let (mut operator, _) = open(true).await;
    let hidden = json!({"type": "ref/prompt", "name": "incident-review"});
    let (shown, _) = operator
        .request("completion/complete", complete(hidden, "any", ""))
        .await;
    assert_eq!(
        shown["result"]["completion"]["values"],
        json!(["secret-suggestion"]),
        "{shown}"
    );
}

/// M7: a session that listed prompts hears that the list changed.
#[tokio::test]
async fn m7_a_listing_session_hears_prompt_list_changes() {
    let (server, _) = server(false);
    let mut raw = Raw::open(server.clone(), "2025-11-25").await;
    assert_eq!(server.prompts_changed().await, 0, "nobody listed yet");
    let _ = raw.request("prompts/list", json!({})).await;
    assert_eq!(server.prompts_changed().await, 1);
    let heard = raw
        .next_within(Duration::from_secs(5))
        .await
        .expect("a notification");
    assert_eq!(
        heard["method"], "notifications/prompts/list_changed",
        "{heard}"
    );
}

/// M7: prompts declared wrong are refused at `build()`, each saying what to do.
#[test]
fn m7_prompts_declared_wrong_are_refused_at_build() {
    let get = |_ctx: Context| async { Ok::<_, ToolError>(vec![Message::user("x")]) };
    let error = McpServer::builder()
        .prompt(McpPrompt::builder("has space", "d").get(get).build())
        .prompt(McpPrompt::builder("no-handler", "d").build())
        .prompt(McpPrompt::builder("twice", "d").get(get).build())
        .prompt(McpPrompt::builder("twice", "d").get(get).build())
        .tool_icons("no-such-tool", [Icon::new("https://example.test/i.png")])
        .build()
        .expect_err("refused");
    let problems = error.problems();
    let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(problems.len(), 4, "{text:#?}");
    assert!(
        text.iter()
            .any(|t| t.contains("`has space`") && t.contains("not an MCP name")),
        "{text:#?}"
    );
    assert!(text.iter().any(|t| t.contains("no handler")), "{text:#?}");
    assert!(problems.iter().any(|p| matches!(p, BuildProblem::McpCatalog(CatalogProblem::DuplicatePrompt { name }) if name == "twice")));
    assert!(problems.iter().any(|p| matches!(
        p,
        BuildProblem::McpCatalog(CatalogProblem::IconsForUnknownTool { .. })
    )));
}
