//! U3: one request type starts every run (new or resumed, with options, a typed answer, a
//! journal, streamed or not), and the ids and names a run gives back compare with the strings
//! a user's code holds.

use std::collections::HashMap;

use tool_runtime::journal::MemoryJournal;
use tool_runtime::{
    Agent, Approval, BoxError, CallId, CallName, Context, Decisions, ErrorKind, ResumeOptions,
    RunEvent, RunOptions, RunRequest, Schema, ScriptedModel, ScriptedTurn, Tool, UsageLimits,
};

/// Echoes its input back.
fn echo() -> Tool {
    Tool::builder("echo", "Repeats a word.")
        .handler(|_ctx: Context, args: Word| async move { Ok::<_, BoxError>(args.word) })
        .build()
}

/// Echoes its input back once a person approves.
fn approved_echo() -> Tool {
    Tool::builder("echo", "Repeats a word.")
        .handler(|_ctx: Context, args: Word| async move { Ok::<_, BoxError>(args.word) })
        .approval_fn(|_ctx: &Context, _args: &Word| {
            Ok::<_, BoxError>(Approval::required("a person reads it first"))
        })
        .build()
}

/// A word to repeat.
#[derive(Schema)]
struct Word {
    /// The word.
    word: String,
}

/// The typed answer.
#[derive(Schema, Debug, PartialEq)]
struct Verdict {
    /// Whether it is done.
    done: bool,
}

fn agent(turns: Vec<ScriptedTurn>) -> Agent {
    Agent::builder(ScriptedModel::new(turns))
        .tool(echo())
        .build()
        .expect("builds")
}

// U3: a user's ordinary comparisons of a call's id and name compile and hold — with a
// literal, with a `String`, as a key of a map keyed by `String`.
#[tokio::test]
async fn u3_ids_and_names_compare_with_str_and_string() {
    let agent = agent(vec![
        ScriptedTurn::new().call("c1", "echo", r#"{"word":"hi"}"#),
        ScriptedTurn::reply("done"),
    ]);
    let out = agent.run(&Context::new(), "go").await.expect("runs");
    let record = &out.calls[0];
    assert!(record.id == "c1");
    assert!(record.name == "echo");
    let some_string = String::from("c1");
    assert!(record.id == some_string);
    assert!(some_string == record.id);
    let found = out.calls.iter().find(|c| c.id == "c1");
    assert!(found.is_some());
    let by_id: HashMap<String, &str> = HashMap::from([("c1".to_owned(), "first")]);
    assert_eq!(by_id.get(&*record.id), Some(&"first"));
    let by_call: HashMap<CallId, CallName> =
        HashMap::from([(record.id.clone(), record.name.clone())]);
    assert_eq!(by_call.get("c1").map(CallName::as_str), Some("echo"));
    assert_eq!(format!("{}:{}", record.id, record.name), "c1:echo");
    assert_eq!(
        serde_json::to_value(&record.id).expect("serializes"),
        serde_json::json!("c1")
    );
}

// U3: options, a typed answer and a journal on one request; the journal's replay answers
// without the model.
#[tokio::test]
async fn u3_one_request_carries_options_a_typed_answer_and_a_journal() {
    let agent = agent(vec![ScriptedTurn::new().call(
        "a1",
        "final_answer",
        r#"{"done":true}"#,
    )]);
    let journal = MemoryJournal::new("run-u3");
    let options = RunOptions::new().limits(UsageLimits::new().requests(1));
    let typed = agent
        .execute(
            &Context::new(),
            RunRequest::new("done?")
                .options(options.clone())
                .typed::<Verdict>()
                .journal(&journal),
        )
        .await
        .expect("a typed answer");
    assert_eq!(typed.value, Verdict { done: true });
    // The same request on the journal's replay: the scripted model has no turn left, so only
    // the journal can answer.
    let replayed = agent
        .execute(
            &Context::new(),
            RunRequest::new("done?")
                .options(options)
                .typed::<Verdict>()
                .journal(&journal.replay()),
        )
        .await
        .expect("replayed");
    assert_eq!(replayed.value, Verdict { done: true });
}

// U3: options for a new run on a resume (and the reverse) are refused before anything runs.
#[tokio::test]
async fn u3_options_that_do_not_fit_the_start_are_refused() {
    let tool = approved_echo();
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "echo", r#"{"word":"hi"}"#),
        ScriptedTurn::reply("never"),
    ]);
    let agent = Agent::builder(model).tool(tool).build().expect("builds");
    let paused = agent
        .run(&Context::new(), "go")
        .await
        .expect_err("pauses")
        .into_paused()
        .expect("a paused run");
    let refused = agent
        .execute(
            &Context::new(),
            RunRequest::resume(paused, Decisions::new().approve("c1")).options(RunOptions::new()),
        )
        .await
        .expect_err("refused");
    assert_eq!(refused.kind(), ErrorKind::Declaration);
    assert!(refused.to_string().contains("resume_options"), "{refused}");

    let new_run = agent
        .execute(
            &Context::new(),
            RunRequest::new("go").resume_options(ResumeOptions::new()),
        )
        .await
        .expect_err("refused");
    assert_eq!(new_run.kind(), ErrorKind::Declaration);
}

// U3: a request streams as it runs, its events and output the same as a run's.
#[tokio::test]
async fn u3_a_request_streams() {
    let agent = agent(vec![
        ScriptedTurn::new().call("c1", "echo", r#"{"word":"hi"}"#),
        ScriptedTurn::reply("done"),
    ]);
    let mut stream = agent.execute_stream(&Context::new(), RunRequest::new("go"));
    let mut finished = Vec::new();
    let mut answer = None;
    while let Some(event) = stream.next().await {
        match event.expect("no error") {
            RunEvent::CallFinished(record) => finished.push(record.id.to_string()),
            RunEvent::Finished(out) => answer = Some(out.text),
            _ => {}
        }
    }
    assert_eq!(finished, ["c1"]);
    assert_eq!(answer.as_deref(), Some("done"));
}

/// The crate root is a table of contents: each name has a home module, and the names earlier
/// releases had at the root still name the same items there, so that code written against
/// them compiles unchanged. Each line below only compiles while both paths name one type.
#[test]
fn u3_each_name_has_a_home_and_the_old_root_names_still_compile() {
    fn same<T>(_: Option<T>, _: Option<T>) {}
    same::<tool_runtime::agent::RunOptions>(None, None::<tool_runtime::RunOptions>);
    same::<tool_runtime::agent::UsageLimits>(None, None::<tool_runtime::UsageLimits>);
    same::<tool_runtime::agent::CallRecord>(None, None::<tool_runtime::CallRecord>);
    same::<tool_runtime::model::Message>(None, None::<tool_runtime::Message>);
    same::<tool_runtime::model::ToolCall>(None, None::<tool_runtime::ToolCall>);
    same::<tool_runtime::testing::ScriptedTurn>(None, None::<tool_runtime::ScriptedTurn>);
    same::<tool_runtime::testing::ConversationModel>(None, None::<tool_runtime::ConversationModel>);
    same::<tool_runtime::tools::ToolBuilder>(None, None::<tool_runtime::ToolBuilder>);
    same::<tool_runtime::tools::Annotations>(None, None::<tool_runtime::Annotations>);
    same::<tool_runtime::outcome::Image>(None, None::<tool_runtime::Image>);
    same::<tool_runtime::approval::Approval>(None, None::<tool_runtime::Approval>);
    same::<tool_runtime::error::Panicked>(None, None::<tool_runtime::Panicked>);
    assert_eq!(
        tool_runtime::outcome::UNAVAILABLE,
        tool_runtime::UNAVAILABLE
    );
    assert_eq!(
        tool_runtime::tools::DEFAULT_MAX_ARGUMENT_BYTES,
        tool_runtime::DEFAULT_MAX_ARGUMENT_BYTES
    );
}

/// W10, R4: a request's observer sees the model's text as it streams, when the run is
/// executed to its end (not streamed), and on a journaled run only from the steps that run:
/// a step answered from the journal streams no text again.
#[tokio::test]
async fn w10_an_observer_sees_the_text_of_the_steps_that_run() {
    let agent = Agent::builder(ScriptedModel::new([
        ScriptedTurn::reply("first"),
        ScriptedTurn::reply("second"),
    ]))
    .build()
    .unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let observed = |seen: &std::sync::Arc<std::sync::Mutex<Vec<(usize, String)>>>| {
        let seen = std::sync::Arc::clone(seen);
        move |event: &RunEvent| {
            if let RunEvent::TextDelta { turn, text } = event {
                seen.lock().unwrap().push((*turn, text.clone()));
            }
        }
    };
    let journal = MemoryJournal::new("run-w10-text");
    let out = agent
        .execute(
            &Context::new(),
            RunRequest::new("go")
                .journal(&journal)
                .on_event(observed(&seen)),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "first");
    let text: String = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(_, t)| t.as_str())
        .collect();
    assert_eq!(text, "first");
    assert!(seen.lock().unwrap().iter().all(|(turn, _)| *turn == 1));

    // The same run taken again from its journal: its one step is answered from the journal.
    let replayed = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let again = journal.replay();
    let out = agent
        .execute(
            &Context::new(),
            RunRequest::new("go")
                .journal(&again)
                .on_event(observed(&replayed)),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "first");
    assert!(replayed.lock().unwrap().is_empty(), "{replayed:?}");
}
