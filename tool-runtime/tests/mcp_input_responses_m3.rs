//! M3 and H10 on protocol 2026-07-28: what a server takes of the `inputResponses` a client
//! brings back. With the sealed `requestState` of the round that asked, the answers to that
//! round's questions are taken and every other key is ignored, however many (the
//! specification's SHOULD: "ignore any information it does not recognize or need"). Without a
//! state, no answer is taken: a client cannot answer a question it was never asked (H10), so
//! the server asks again (a new `input_required`, as the specification says a server SHOULD
//! when information it needs is missing) and the handler never sees the unsolicited answer.
//! Raw JSON-RPC over a pipe, as a client sees it.
#![cfg(feature = "mcp")]

#[path = "support/raw_pipe.rs"]
mod raw_pipe;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use raw_pipe::{Raw as RawPipe, meta_2026};
use serde_json::{Map, Value, json};
use tool_runtime::elicit::Elicited;
use tool_runtime::mcp::McpServer;
use tool_runtime::{Context, Schema, Tool, ToolError};

/// The tool takes no arguments.
#[derive(Schema, Debug)]
struct NoArguments {}

/// Who answers.
#[derive(Schema, Debug)]
struct UserName {
    /// The name.
    name: String,
}

/// `greet` asks the user's name under the key `user_name`; how many greetings it gave.
fn server() -> (McpServer, Arc<AtomicUsize>) {
    let greeted = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&greeted);
    let greet = Tool::builder("greet", "Asks the user's name, then greets them.")
        .handler(move |ctx: Context, _args: NoArguments| {
            let counted = Arc::clone(&counted);
            async move {
                match ctx
                    .elicit_named::<UserName>("user_name", "Your name?")
                    .await
                {
                    Ok(Elicited::Accepted(user)) => {
                        counted.fetch_add(1, Ordering::SeqCst);
                        Ok(format!("Hello, {}!", user.name))
                    }
                    Ok(_) => Ok("Hello, whoever you are!".to_owned()),
                    Err(error) => Err(ToolError::new(format!("the question failed: {error}"))),
                }
            }
        })
        .build();
    let server = McpServer::builder().tool(greet).build().expect("built");
    (server, greeted)
}

/// A client speaking newline-delimited JSON-RPC over a pipe, on 2026-07-28.
struct Raw(RawPipe);

impl Raw {
    fn open(server: McpServer) -> Self {
        Self(RawPipe::unopened(server))
    }

    /// Calls `greet` with `extra` params (`inputResponses`, `requestState`); the answer.
    async fn call(&mut self, extra: Value) -> Value {
        let mut params = json!({
            "name": "greet",
            "arguments": {},
            "_meta": meta_2026("m3", json!({"elicitation": {}})),
        });
        for (key, value) in extra.as_object().into_iter().flatten() {
            params[key] = value.clone();
        }
        self.0.answer("tools/call", params).await
    }
}

/// An accepted answer naming `name`.
fn accepted(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}

/// The round's question and its state, from an `input_required` answer.
fn asked(answer: &Value) -> String {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    assert!(result["inputRequests"]["user_name"].is_object(), "{answer}");
    result["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned()
}

/// M3 on 2026-07-28: answers brought back with the round's sealed state are taken, and the
/// keys the round did not ask (two, or thousands) are ignored: the call completes.
#[tokio::test]
async fn m3_extra_input_responses_beside_a_sealed_round_are_ignored() {
    let (server, greeted) = server();
    let mut raw = Raw::open(server);
    for extra_keys in [2, 5_000] {
        let state = asked(&raw.call(json!({})).await);
        let mut responses = Map::new();
        responses.insert("user_name".to_owned(), accepted("Alice"));
        for i in 0..extra_keys {
            let unexpected = json!({"action": "accept", "content": {"foo": i}});
            responses.insert(format!("unexpected-{i}"), unexpected);
        }
        let answer = raw
            .call(json!({"inputResponses": responses, "requestState": state}))
            .await;
        let result = &answer["result"];
        assert_eq!(result["resultType"], "complete", "{answer}");
        assert_eq!(result["content"][0]["text"], "Hello, Alice!", "{answer}");
    }
    assert_eq!(greeted.load(Ordering::SeqCst), 2);
}

/// H10, M3 on 2026-07-28: answers without a state answer nothing (the server never asked):
/// the call asks again, under the same key, and the handler never sees the answer; with an
/// extra key or without, the same.
#[tokio::test]
async fn h10_answers_without_a_request_state_are_not_taken_and_the_question_is_asked_again() {
    let (server, greeted) = server();
    let mut raw = Raw::open(server);
    for responses in [
        json!({"user_name": accepted("Mallory")}),
        json!({"user_name": accepted("Mallory"), "unknown_extra_key": {"action": "accept"}}),
    ] {
        let answer = raw.call(json!({"inputResponses": responses})).await;
        asked(&answer);
        assert!(!answer.to_string().contains("Mallory"), "{answer}");
    }
    assert_eq!(
        greeted.load(Ordering::SeqCst),
        0,
        "the handler took no answer"
    );
}
