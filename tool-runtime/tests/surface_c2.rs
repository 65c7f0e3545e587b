//! C2: a change of the tool surface is listed per tool and pointer and classified: breaking
//! (a tool removed or renamed, a field newly required, a type or bound narrowed, an enum value
//! removed, `additionalProperties` newly false, approval newly required) or compatible (a tool
//! or an optional field added, a bound widened, an enum value added, documentation changed),
//! the other way round in an output schema.
#![cfg(all(feature = "openai", feature = "anthropic", feature = "mcp"))]

mod support {
    pub mod surface;
}

use serde_json::{Value, json};
use support::surface::{Base, WithOptional, WithRequired, surface, tool};
use tool_runtime::mcp::{McpNaming, McpServer};
use tool_runtime::surface::{ChangeKind, Compatibility, Part, Surface, SurfaceDiff};
use tool_runtime::{Context, Schema, Tool, ToolError};

// ─── Inputs, one per change from `Base` ─────────────────────────────────────────────────────

// Narrower everywhere: `max_len` lowered, `minimum` raised, the pattern changed, an enum
// value removed, the weight an integer.
/// A lookup.
#[derive(Schema)]
struct Narrower {
    /// The service.
    #[schema(max_len = 32, pattern = "^svc-[0-9]+$")]
    service_id: String,
    /// How many days ahead.
    #[schema(range = 5..=30)]
    days: u32,
    /// How urgent.
    #[schema(one_of = ["low", "high"])]
    urgency: String,
    /// A weight.
    weight: i32,
}

// Wider everywhere: `max_len` raised, the pattern removed, `minimum` lowered, an enum
// value added; a field's description changed.
/// A lookup.
#[derive(Schema)]
struct Wider {
    /// The service to look up.
    #[schema(max_len = 128)]
    service_id: String,
    /// How many days ahead.
    #[schema(range = 0..=30)]
    days: u32,
    /// How urgent.
    #[schema(one_of = ["low", "high", "now", "later"])]
    urgency: String,
    /// A weight.
    weight: f64,
}

/// What a window lookup returns.
#[derive(Schema, serde::Serialize)]
struct Found {
    /// When it starts.
    starts_at: String,
}

// The same, now with its end too.
/// What a window lookup returns.
#[derive(Schema, serde::Serialize)]
struct FoundMore {
    /// When it starts.
    starts_at: String,
    /// When it ends.
    ends_at: String,
}

// ─── Helpers ────────────────────────────────────────────────────────────────────────────────

/// The changes from `was` to `is`.
fn diff(was: Vec<Tool>, is: Vec<Tool>) -> SurfaceDiff {
    surface(was).diff(&surface(is))
}

/// The changes of the declaration (the parts beside `published`), as (pointer, kind,
/// compatibility), in order.
fn declared(diff: &SurfaceDiff) -> Vec<(String, ChangeKind, Compatibility)> {
    diff.changes()
        .iter()
        .filter(|c| !matches!(c.part(), Part::Published(_)))
        .map(|c| (c.pointer().to_owned(), c.kind().clone(), c.compatibility()))
        .collect()
}

fn narrowed(keyword: &str) -> ChangeKind {
    ChangeKind::BoundNarrowed {
        keyword: keyword.to_owned(),
    }
}

fn widened(keyword: &str) -> ChangeKind {
    ChangeKind::BoundWidened {
        keyword: keyword.to_owned(),
    }
}

use Compatibility::{Breaking, Compatible};

// ─── Classification ─────────────────────────────────────────────────────────────────────────

#[test]
fn c2_tool_removed_is_breaking_and_tool_added_is_compatible() {
    let a = || tool::<Base>("lookup-window").build();
    let b = || {
        Tool::builder("restart-service", "Restart a service.")
            .handler(|_ctx: Context, _input: Found| async { Ok::<_, ToolError>("ok") })
            .build()
    };
    let removed = diff(vec![a(), b()], vec![a()]);
    assert_eq!(
        declared(&removed),
        [(String::new(), ChangeKind::ToolRemoved, Breaking)]
    );
    assert_eq!(removed.changes()[0].tool(), "restart-service");
    assert!(removed.is_breaking());

    let added = diff(vec![a()], vec![a(), b()]);
    assert_eq!(
        declared(&added),
        [(String::new(), ChangeKind::ToolAdded, Compatible)]
    );
    assert!(!added.is_breaking());
}

#[test]
fn c2_tool_renamed_is_breaking() {
    let renamed = diff(
        vec![tool::<Base>("lookup-window").build()],
        vec![tool::<Base>("find-window").build()],
    );
    assert_eq!(
        declared(&renamed),
        [(
            String::new(),
            ChangeKind::ToolRenamed {
                to: "find-window".into()
            },
            Breaking
        )]
    );
    assert_eq!(renamed.changes()[0].tool(), "lookup-window");
    assert_eq!(renamed.changes()[0].was(), Some(&json!("lookup-window")));
    assert_eq!(renamed.changes()[0].is(), Some(&json!("find-window")));
}

#[test]
fn c2_field_newly_required_is_breaking() {
    let changed = diff(
        vec![tool::<Base>("lookup-window").build()],
        vec![tool::<WithRequired>("lookup-window").build()],
    );
    assert_eq!(
        declared(&changed),
        [
            (
                "/input_schema/properties/region".into(),
                ChangeKind::FieldAdded,
                Compatible
            ),
            (
                "/input_schema/required".into(),
                ChangeKind::FieldNewlyRequired,
                Breaking
            ),
        ]
    );
    let required = &changed
        .changes()
        .iter()
        .find(|c| c.kind() == &ChangeKind::FieldNewlyRequired);
    assert_eq!(required.and_then(|c| c.is()), Some(&json!("region")));
    assert!(changed.is_breaking());
}

#[test]
fn c2_optional_field_added_is_compatible_in_every_published_form() {
    let changed = diff(
        vec![tool::<Base>("lookup-window").build()],
        vec![tool::<WithOptional>("lookup-window").build()],
    );
    assert_eq!(
        declared(&changed),
        [(
            "/input_schema/properties/region".into(),
            ChangeKind::FieldAdded,
            Compatible
        )]
    );
    // Every publisher's form shows the field; strict mode lists it in `required` (nullable),
    // which is what it sends, and no caller is broken by it.
    let publishers: std::collections::BTreeSet<&Part> = changed
        .changes()
        .iter()
        .filter(|c| c.kind() == &ChangeKind::Published)
        .map(|c| c.part())
        .collect();
    let published = surface([tool::<Base>("lookup-window").build()]);
    let published = published
        .tool("lookup-window")
        .map(|entry| &entry["published"]);
    let every = published.and_then(Value::as_object).map_or(0, |p| p.len());
    assert_eq!(publishers.len(), every, "{changed}");
    assert!(
        changed
            .changes()
            .iter()
            .any(|c| c.pointer() == "/published/openai.chat.strict/function/parameters/required"),
        "{changed}"
    );
    assert!(!changed.is_breaking(), "{changed}");
}

#[test]
fn c2_type_and_bounds_narrowed_and_enum_value_removed_are_breaking() {
    let changed = diff(
        vec![tool::<Base>("lookup-window").build()],
        vec![tool::<Narrower>("lookup-window").build()],
    );
    let found = declared(&changed);
    let expect = [
        ("/input_schema/properties/days/minimum", narrowed("minimum")),
        (
            "/input_schema/properties/service_id/maxLength",
            narrowed("maxLength"),
        ),
        (
            "/input_schema/properties/service_id/pattern",
            narrowed("pattern"),
        ),
        (
            "/input_schema/properties/urgency/enum",
            ChangeKind::EnumValueRemoved,
        ),
        (
            "/input_schema/properties/weight/type",
            ChangeKind::TypeNarrowed,
        ),
    ];
    for (pointer, kind) in expect {
        assert!(
            found.contains(&(pointer.to_owned(), kind.clone(), Breaking)),
            "{pointer} {kind} not found in:\n{changed}"
        );
    }
    // An `i32` also gains the bounds of its range (S4): narrowed, hence breaking, too.
    assert!(found.iter().all(|(_, _, c)| *c == Breaking), "{changed}");
    let removed = changed
        .changes()
        .iter()
        .find(|c| c.kind() == &ChangeKind::EnumValueRemoved);
    assert_eq!(removed.and_then(|c| c.was()), Some(&json!("now")));
}

#[test]
fn c2_bounds_widened_enum_value_added_and_description_changed_are_compatible() {
    let changed = diff(
        vec![tool::<Base>("lookup-window").build()],
        vec![
            tool::<Wider>("lookup-window")
                .title("Window lookup")
                .build(),
        ],
    );
    let found = declared(&changed);
    let expect = [
        ("/input_schema/properties/days/minimum", widened("minimum")),
        (
            "/input_schema/properties/service_id/description",
            ChangeKind::Documentation,
        ),
        (
            "/input_schema/properties/service_id/maxLength",
            widened("maxLength"),
        ),
        (
            "/input_schema/properties/service_id/pattern",
            widened("pattern"),
        ),
        (
            "/input_schema/properties/urgency/enum",
            ChangeKind::EnumValueAdded,
        ),
        ("/title", ChangeKind::Documentation),
    ];
    assert_eq!(found.len(), expect.len(), "{changed}");
    for (pointer, kind) in expect {
        assert!(
            found.contains(&(pointer.to_owned(), kind.clone(), Compatible)),
            "{pointer} {kind} not found in:\n{changed}"
        );
    }
    assert!(!changed.is_breaking(), "{changed}");

    let described = diff(
        vec![tool::<Base>("lookup-window").build()],
        vec![
            Tool::builder("lookup-window", "Find the next maintenance window.")
                .handler(|_ctx: Context, _input: Base| async { Ok::<_, ToolError>("ok") })
                .build(),
        ],
    );
    assert_eq!(
        declared(&described),
        [("/description".into(), ChangeKind::Documentation, Compatible)]
    );
}

/// The document of `tools`, with `edit` applied to the entry of `name`.
fn edited(tools: Vec<Tool>, name: &str, edit: impl FnOnce(&mut Value)) -> Surface {
    let mut document: Value =
        serde_json::from_str(&surface(tools).to_json()).expect("a surface is JSON");
    edit(&mut document["tools"][name]);
    // The report said what the renderings before the edit lose (V4): read without it.
    document
        .as_object_mut()
        .map(|document| document.remove("what_each_provider_loses"));
    Surface::from_json(&document.to_string()).expect("still a surface")
}

#[test]
fn c2_additional_properties_newly_false_is_breaking() {
    let is = surface([tool::<Base>("lookup-window").build()]);
    let was = edited(
        vec![tool::<Base>("lookup-window").build()],
        "lookup-window",
        |entry| {
            entry["input_schema"]["additionalProperties"] = json!(true);
        },
    );
    let closed = was.diff(&is);
    assert_eq!(
        declared(&closed),
        [(
            "/input_schema/additionalProperties".into(),
            ChangeKind::AdditionalPropertiesClosed,
            Breaking
        )]
    );
    let opened = is.diff(&was);
    assert_eq!(
        declared(&opened),
        [(
            "/input_schema/additionalProperties".into(),
            ChangeKind::AdditionalPropertiesOpened,
            Compatible
        )]
    );
}

#[test]
fn c2_approval_newly_required_and_policy_added_are_breaking() {
    let plain = || tool::<Base>("lookup-window").build();
    let guarded = || {
        tool::<Base>("lookup-window")
            .require_approval()
            .available_fn(|_ctx: &Context| Ok::<_, ToolError>(true))
            .build()
    };
    assert_eq!(
        declared(&diff(vec![plain()], vec![guarded()])),
        [
            (
                "/approval".into(),
                ChangeKind::ApprovalNewlyRequired,
                Breaking
            ),
            (
                "/availability_policy".into(),
                ChangeKind::PolicyAdded,
                Breaking
            ),
        ]
    );
    assert_eq!(
        declared(&diff(vec![guarded()], vec![plain()])),
        [
            (
                "/approval".into(),
                ChangeKind::ApprovalNoLongerRequired,
                Compatible
            ),
            (
                "/availability_policy".into(),
                ChangeKind::PolicyRemoved,
                Compatible
            ),
        ]
    );
}

#[test]
fn c2_an_output_schema_reads_the_other_way() {
    let returning = |more: bool| {
        let builder = Tool::builder("lookup-window", "Look a maintenance window up.");
        if more {
            builder.structured_handler(|_ctx: Context, _input: Base| async {
                Ok::<_, ToolError>(FoundMore {
                    starts_at: String::new(),
                    ends_at: String::new(),
                })
            })
        } else {
            builder.structured_handler(|_ctx: Context, _input: Base| async {
                Ok::<_, ToolError>(Found {
                    starts_at: String::new(),
                })
            })
        }
        .build()
    };
    // A result that promises one more field breaks no reader of it.
    let more = diff(vec![returning(false)], vec![returning(true)]);
    assert_eq!(
        declared(&more),
        [
            (
                "/output_schema/properties/ends_at".into(),
                ChangeKind::FieldAdded,
                Compatible
            ),
            (
                "/output_schema/required".into(),
                ChangeKind::FieldNewlyRequired,
                Compatible
            ),
        ]
    );
    // One that drops a field does.
    let less = diff(vec![returning(true)], vec![returning(false)]);
    assert!(less.is_breaking(), "{less}");
    assert!(declared(&less).contains(&(
        "/output_schema/properties/ends_at".into(),
        ChangeKind::FieldRemoved,
        Breaking
    )));
    // No output schema any more: breaking; a new one: compatible.
    let plain = tool::<Base>("lookup-window").build();
    assert_eq!(
        declared(&diff(vec![returning(false)], vec![plain.clone()])),
        [(
            "/output_schema".into(),
            ChangeKind::OutputSchemaRemoved,
            Breaking
        )]
    );
    assert_eq!(
        declared(&diff(vec![plain], vec![returning(false)])),
        [(
            "/output_schema".into(),
            ChangeKind::OutputSchemaAdded,
            Compatible
        )]
    );
}

#[test]
fn c2_an_mcp_name_changed_is_breaking() {
    let server = |naming: McpNaming| {
        McpServer::builder()
            .tool(tool::<Base>("lookup-window").build())
            .naming(naming)
            .build()
            .expect("the server builds")
    };
    let was = Surface::of_mcp_server(&server(McpNaming::Declared)).expect("renders");
    let is = Surface::of_mcp_server(&server(McpNaming::SnakeCase)).expect("renders");
    let changed = was.diff(&is);
    assert_eq!(changed.changes().len(), 1, "{changed}");
    let change = &changed.changes()[0];
    assert_eq!(change.pointer(), "/published/mcp/name");
    assert_eq!(change.kind(), &ChangeKind::PublishedNameChanged);
    assert_eq!(change.is(), Some(&json!("lookup_window")));
    assert!(changed.is_breaking());
}

#[test]
fn q1_c2_a_deferred_tool_shows_deferred_and_newly_deferring_it_is_breaking() {
    let plain = || tool::<Base>("lookup-window").build();
    let deferred = || tool::<Base>("lookup-window").deferred_loading().build();
    let shown = surface(vec![deferred()]);
    let entry = shown.tool("lookup-window").expect("the tool");
    assert_eq!(entry["deferred_loading"], true);
    // Anthropic's driver sends it for its provider's tool search to load; the others send it
    // as it is once a search loaded it.
    assert_eq!(entry["published"]["anthropic"]["defer_loading"], true);
    assert!(
        entry["published"]["openai.chat"]
            .get("defer_loading")
            .is_none()
    );
    assert!(entry["published"]["mcp"].get("defer_loading").is_none());
    let entry = surface(vec![plain()]);
    assert_eq!(
        entry.tool("lookup-window").unwrap()["deferred_loading"],
        false
    );
    // A document written before the field existed held no deferred tool: nothing changed.
    let mut older: Value = serde_json::from_str(&entry.to_json()).unwrap();
    (older["tools"]["lookup-window"].as_object_mut()).map(|tool| tool.remove("deferred_loading"));
    let older = Surface::from_json(&older.to_string()).unwrap();
    assert!(older.diff(&entry).changes().is_empty());

    assert_eq!(
        declared(&diff(vec![plain()], vec![deferred()])),
        [(
            "/deferred_loading".into(),
            ChangeKind::LoadingDeferred,
            Breaking
        )]
    );
    assert_eq!(
        declared(&diff(vec![deferred()], vec![plain()])),
        [(
            "/deferred_loading".into(),
            ChangeKind::LoadingNoLongerDeferred,
            Compatible
        )]
    );
}
