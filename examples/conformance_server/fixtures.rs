//! The conformance server's fixtures for scenarios of protocol 2026-07-28 and the Tasks
//! extension: questions asked in the answer (input requests named by the handler, M10), a
//! parameter mirrored into a header (`x-mcp-header`, M10), and tasks (M5, M9).

use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::mcp::{JsonSchemaValidator, ProtocolError};
use tool_runtime::{BoxError, Context, Schema, Tool, ToolError, elicit::Elicited};

use super::NoArguments;

/// Who answers a question by name.
#[derive(Schema, Debug)]
struct UserName {
    /// The name.
    name: String,
}

/// `test-input-required-result-elicitation`: asks the user's name, naming the question
/// `user_name` (M10: on 2026-07-28 the key of its input request), and greets them.
pub(super) fn input_required_elicitation() -> Tool {
    Tool::builder(
        "test-input-required-result-elicitation",
        "Asks the user's name, then greets them.",
    )
    .handler(|ctx: Context, _args: NoArguments| async move {
        match (ctx.elicit_named::<UserName>("user_name", "What is your name?")).await {
            Ok(Elicited::Accepted(user)) => Ok(format!("Hello, {}!", user.name)),
            Ok(_) => Ok("Hello, whoever you are!".to_owned()),
            Err(error) => Err(ToolError::new(format!("the question failed: {error}"))),
        }
    })
    .build()
}

/// A yes or no.
#[derive(Schema, Debug)]
struct Confirmation {
    /// Whether it is confirmed.
    ok: bool,
}

/// A colour.
#[derive(Schema, Debug)]
struct Colour {
    /// Its name.
    color: String,
}

/// `test-input-required-result-request-state` (and `…-tampered-state`): asks for a
/// confirmation (`confirm`); the answer comes back with the sealed state, checked (H10).
pub(super) fn input_required_confirm(name: &'static str) -> Tool {
    Tool::builder(name, "Asks for a confirmation, then says the state held.")
        .handler(|ctx: Context, _args: NoArguments| async move {
            match (ctx.elicit_named::<Confirmation>("confirm", "Please confirm")).await {
                Ok(Elicited::Accepted(answer)) => Ok(format!("state-ok: confirmed {}", answer.ok)),
                Ok(_) => Ok("state-ok: not confirmed".to_owned()),
                Err(error) => Err(ToolError::new(format!("the question failed: {error}"))),
            }
        })
        .build()
}

/// `test-input-required-result-multi-round`: two questions, one round each (`step1`, `step2`).
pub(super) fn input_required_multi_round() -> Tool {
    Tool::builder(
        "test-input-required-result-multi-round",
        "Asks a name, then a favourite colour.",
    )
    .handler(|ctx: Context, _args: NoArguments| async move {
        let asked = async {
            let name = ctx.elicit_named::<UserName>("step1", "Step 1: What is your name?");
            let Elicited::Accepted(user) = name.await? else {
                return Ok("no name".to_owned());
            };
            let colour =
                ctx.elicit_named::<Colour>("step2", "Step 2: What is your favorite color?");
            Ok(match colour.await? {
                Elicited::Accepted(colour) => format!("{} likes {}", user.name, colour.color),
                _ => format!("{} has no favourite", user.name),
            })
        };
        asked
            .await
            .map_err(|error: tool_runtime::ElicitError| ToolError::new(error.to_string()))
    })
    .build()
}

/// `test-custom-header`: a tool whose `region` a 2026-07-28 client mirrors into the
/// `Mcp-Param-Region` header, which the server checks against the body (M10).
pub(super) fn custom_header() -> Result<Tool, BoxError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "region": { "type": "string", "x-mcp-header": "Region" },
            "query": { "type": "string" }
        },
        "required": ["query"]
    });
    let validator = JsonSchemaValidator::new(&schema)?;
    Ok(
        Tool::builder("test-custom-header", "Runs a query in a region.")
            .dynamic_handler(schema, validator, |_ctx: Context, args: Value| async move {
                Ok::<_, ToolError>(format!("ran in {}", args["region"]))
            })
            .build(),
    )
}

/// The arguments of `greet`.
#[derive(Schema, Debug)]
struct Greeting {
    /// Whom to greet.
    #[schema(default = "world")]
    name: String,
}

/// `greet` (the Tasks extension's fixtures): answers at once, never as a task.
pub(super) fn greet() -> Tool {
    Tool::builder("greet", "Greets someone.")
        .handler(|_ctx: Context, args: Greeting| async move {
            Ok::<_, ToolError>(format!("Hello, {}!", args.name))
        })
        .build()
}

/// The arguments of `slow-compute`.
#[derive(Schema, Debug)]
struct Compute {
    /// How long to work, in seconds.
    #[schema(default = 0, range = 0..=120)]
    seconds: u32,
    /// A label, repeated in the answer.
    #[schema(default = "")]
    label: String,
}

/// `slow-compute`: works `seconds` seconds, then answers; cancelled, it stops.
pub(super) fn slow_compute() -> Tool {
    Tool::builder("slow-compute", "Works for a while, then answers.")
        .handler(|ctx: Context, args: Compute| async move {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_secs(args.seconds.into())) => {}
                () = ctx.cancelled() => return Err(ToolError::new("cancelled")),
            }
            Ok(format!("computed {} after {} s", args.label, args.seconds))
        })
        .build()
}

/// `failing-job`: fails at its work after about a second (a result with `isError`).
pub(super) fn failing_job() -> Tool {
    Tool::builder("failing-job", "Fails at its work after a second.")
        .handler(|_ctx: Context, _args: NoArguments| async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Err::<String, _>(ToolError::new("the job failed"))
        })
        .build()
}

/// `protocol-error-job`: ends its call with a protocol error (M9).
pub(super) fn protocol_error_job() -> Tool {
    Tool::builder("protocol-error-job", "Ends its call with a protocol error.")
        .handler(|_ctx: Context, _args: NoArguments| async {
            Err::<String, _>(ProtocolError::internal_error("the job broke down"))
        })
        .build()
}

/// The arguments of `confirm-delete`.
#[derive(Schema, Debug)]
struct Deletion {
    /// The file to delete.
    #[schema(default = "", max_len = 256)]
    filename: String,
}

/// The answer `confirm-delete` asks for.
#[derive(Schema, Debug)]
struct DeleteConfirmation {
    /// Whether the deletion is confirmed.
    confirm: bool,
}

/// `confirm-delete` (M9, a task that waits for input): asks to confirm the deletion; as a task
/// of the Tasks extension the question waits in the task (`input_required` on `tasks/get`,
/// answered by `tasks/update`).
pub(super) fn confirm_delete() -> Tool {
    Tool::builder(
        "confirm-delete",
        "Asks to confirm a deletion, then says what it did.",
    )
    .handler(|ctx: Context, args: Deletion| async move {
        let asked = ctx.elicit_named::<DeleteConfirmation>("confirm", "Delete the file?");
        match asked.await {
            Ok(Elicited::Accepted(answer)) if answer.confirm => {
                Ok(format!("deleted {}", args.filename))
            }
            Ok(_) => Ok(format!("kept {}", args.filename)),
            Err(error) => Err(ToolError::new(format!("the question failed: {error}"))),
        }
    })
    .build()
}

/// An answer of `multi-input`.
#[derive(Schema, Debug)]
struct Partial {
    /// A name.
    #[schema(default = "")]
    name: String,
    /// Whether it is confirmed.
    #[schema(default = false)]
    confirm: bool,
}

/// `multi-input` (M9): asks two questions at once, which wait in its task together and may be
/// answered one at a time.
pub(super) fn multi_input() -> Tool {
    Tool::builder("multi-input", "Asks two questions at once, then answers.")
        .handler(|ctx: Context, _args: NoArguments| async move {
            let (first, second) = tokio::join!(
                ctx.elicit_named::<Partial>("first", "The first input?"),
                ctx.elicit_named::<Partial>("second", "The second input?"),
            );
            let said = |answer: Result<Elicited<Partial>, _>| match answer {
                Ok(Elicited::Accepted(partial)) => partial.name,
                _ => "nothing".to_owned(),
            };
            Ok::<_, ToolError>(format!("got {} and {}", said(first), said(second)))
        })
        .build()
}

/// `test-tool-with-task` (M9, a question before the task): asks the user's name in the call's own
/// answer (`user_name`), then goes on as a task, whose result greets them.
pub(super) fn tool_with_task() -> Tool {
    Tool::builder(
        "test-tool-with-task",
        "Asks the user's name, then greets them from a task.",
    )
    .handler(|ctx: Context, _args: NoArguments| async move {
        let asked = ctx.elicit_named::<UserName>("user_name", "What is your name?");
        let name = match asked.await {
            Ok(Elicited::Accepted(user)) => user.name,
            Ok(_) => "whoever you are".to_owned(),
            Err(error) => return Err(ToolError::new(format!("the question failed: {error}"))),
        };
        // The question is answered: the rest is the long part, and runs as a task.
        ctx.continue_as_task();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        Ok(format!("Hello, {name}, from a task!"))
    })
    .build()
}
