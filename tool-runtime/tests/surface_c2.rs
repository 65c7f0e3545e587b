//! C2: the tool surface renders as one deterministic document holding what each publisher
//! sends, and a change to it is listed per tool and pointer, classified breaking or
//! compatible; the snapshot helper fails with that diff and rewrites its file when
//! `UPDATE_SURFACE=1`.
#![cfg(all(feature = "openai", feature = "anthropic", feature = "mcp"))]

use serde_json::{Value, json};
use tool_runtime::mcp::{McpNaming, McpServer};
use tool_runtime::providers::anthropic::Anthropic;
use tool_runtime::providers::openai::{OpenAiChat, OpenAiResponses};
use tool_runtime::surface::{
    ChangeKind, Checked, Compatibility, Part, Snapshot, SnapshotError, Surface, SurfaceDiff,
    assert_snapshot,
};
use tool_runtime::{Agent, Context, Model, OfflineModel, Schema, Tool, ToolError};

// ─── Inputs, one pair per change ────────────────────────────────────────────────────────────

/// A lookup.
#[derive(Schema)]
struct Base {
    /// The service.
    #[schema(max_len = 64, pattern = "^[a-z0-9-]+$")]
    service_id: String,
    /// How many days ahead.
    #[schema(range = 1..=30)]
    days: u32,
    /// How urgent.
    #[schema(one_of = ["low", "high", "now"])]
    urgency: String,
    /// A weight.
    weight: f64,
}

// The same, with a field newly required.
/// A lookup.
#[derive(Schema)]
struct WithRequired {
    /// The service.
    #[schema(max_len = 64, pattern = "^[a-z0-9-]+$")]
    service_id: String,
    /// How many days ahead.
    #[schema(range = 1..=30)]
    days: u32,
    /// How urgent.
    #[schema(one_of = ["low", "high", "now"])]
    urgency: String,
    /// A weight.
    weight: f64,
    /// The region.
    region: String,
}

// The same, with an optional field added.
/// A lookup.
#[derive(Schema)]
struct WithOptional {
    /// The service.
    #[schema(max_len = 64, pattern = "^[a-z0-9-]+$")]
    service_id: String,
    /// How many days ahead.
    #[schema(range = 1..=30)]
    days: u32,
    /// How urgent.
    #[schema(one_of = ["low", "high", "now"])]
    urgency: String,
    /// A weight.
    weight: f64,
    /// The region.
    region: Option<String>,
}

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

/// A tool named `name` taking `I`.
fn tool<I: Schema + Send + 'static>(name: &str) -> tool_runtime::ToolBuilder {
    Tool::builder(name, "Look a maintenance window up.")
        .handler(|_ctx: Context, _input: I| async { Ok::<_, ToolError>("ok") })
}

fn surface(tools: impl IntoIterator<Item = Tool>) -> Surface {
    Surface::of_tools(tools).expect("the tools render")
}

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
    assert_eq!(publishers.len(), 5, "{changed}");
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

// ─── The document ───────────────────────────────────────────────────────────────────────────

fn two_tools(reversed: bool) -> Vec<Tool> {
    let a = tool::<Base>("lookup-window").read_only().build();
    let b = tool::<WithOptional>("restart-service")
        .destructive()
        .require_approval()
        .sequential()
        .retries(1)
        .build();
    if reversed { vec![b, a] } else { vec![a, b] }
}

#[test]
fn c2_two_renders_are_byte_equal_whatever_the_order_of_registration() {
    let first = surface(two_tools(false)).to_json();
    assert_eq!(first, surface(two_tools(false)).to_json());
    assert_eq!(first, surface(two_tools(true)).to_json());
    // An agent and an MCP server holding the same tools, in either order, render the same.
    let agent = |reversed| {
        let agent = Agent::builder(OfflineModel::new())
            .tools(two_tools(reversed))
            .build()
            .expect("the agent builds");
        Surface::of_agent(&agent).expect("renders").to_json()
    };
    assert_eq!(first, agent(false));
    assert_eq!(first, agent(true));
    let server = McpServer::builder()
        .tools(two_tools(true))
        .build()
        .expect("the server builds");
    assert_eq!(
        first,
        Surface::of_mcp_server(&server).expect("renders").to_json()
    );

    // Tools by name, every object's members sorted, pretty-printed, one final newline.
    let lookup = first.find("\"lookup-window\": {").expect("listed");
    let restart = first.find("\"restart-service\": {").expect("listed");
    assert!(lookup < restart);
    let entry = &first[restart..];
    let order = [
        "\"approval\": true",
        "\"availability_policy\": false",
        "\"deferred\": false",
        "\"description\"",
        "\"hints\"",
        "\"input_schema\"",
        "\"name\": \"restart-service\"",
        "\"output_schema\": null",
        "\"published\"",
        "\"retries\": 1",
        "\"sequential\": true",
        "\"title\": null",
    ];
    let at: Vec<usize> = order
        .iter()
        .map(|key| entry.find(key).unwrap_or_else(|| panic!("{key} missing")))
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{entry}");
    assert!(first.starts_with("{\n  \"surface_version\": 1,\n  \"tools\": {\n"));
    assert!(first.ends_with("}\n") && !first.ends_with("\n\n"));
    // Read back, it is the same surface and renders the same bytes.
    let read = Surface::from_json(&first).expect("reads back");
    assert_eq!(read.to_json(), first);
    assert!(read.diff(&surface(two_tools(true))).is_empty());
}

#[test]
fn c2_published_forms_are_what_each_publisher_sends() {
    let tools = two_tools(false);
    let document = surface(tools.clone());
    let published = |name: &str, publisher: &str| {
        document.tool(name).expect("listed")["published"][publisher].clone()
    };
    let sent = |model: &dyn Model, tool: &Tool, format: &str| -> Value {
        let spec = model.tool_spec(tool).expect("the driver takes the tool");
        serde_json::from_str(spec.wire(format).expect("rendered")).expect("JSON")
    };
    let chat = OpenAiChat::builder().api_key("k").build().expect("builds");
    let plain = OpenAiChat::builder()
        .api_key("k")
        .strict(tool_runtime::providers::openai::StrictMode::Off)
        .build()
        .expect("builds");
    let responses = OpenAiResponses::builder()
        .api_key("k")
        .build()
        .expect("builds");
    let anthropic = Anthropic::builder().api_key("k").build().expect("builds");
    for tool in &tools {
        let name = tool.name();
        let strict = sent(&chat, tool, "openai.chat");
        assert_eq!(published(name, "openai.chat.strict"), strict);
        assert_eq!(strict["function"]["strict"], json!(true));
        let loose = sent(&plain, tool, "openai.chat");
        assert_eq!(published(name, "openai.chat"), loose);
        assert_eq!(loose["function"]["parameters"], *tool.schema());
        assert!(loose["function"].get("strict").is_none());
        assert_eq!(
            published(name, "openai.responses.strict"),
            sent(&responses, tool, "openai.responses")
        );
        assert_eq!(
            published(name, "anthropic"),
            sent(&anthropic, tool, "anthropic.messages")
        );
        let mcp = published(name, "mcp");
        assert_eq!(mcp["inputSchema"], *tool.schema());
        assert_eq!(mcp["name"], json!(name));
        assert_eq!(
            document.tool(name).expect("listed")["input_schema"],
            *tool.schema()
        );
    }
    assert_eq!(
        published("lookup-window", "mcp")["annotations"],
        json!({"readOnlyHint": true})
    );
}

// ─── The snapshot helper ────────────────────────────────────────────────────────────────────

/// A fresh path under the system's temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("c2-surface-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir.join("surface").join("tools.json")
}

#[test]
fn c2_snapshot_fails_with_the_classified_diff() {
    let path = scratch("mismatch");
    let was = surface([tool::<Base>("lookup-window").build()]);
    let is = surface([tool::<WithRequired>("lookup-window").build()]);
    assert!(matches!(
        Snapshot::at(&path).update(false).check(&was),
        Err(SnapshotError::Missing { .. })
    ));
    assert_eq!(
        Snapshot::at(&path)
            .update(true)
            .check(&was)
            .expect("writes"),
        Checked::Written { diff: None }
    );
    assert_eq!(
        Snapshot::at(&path)
            .update(false)
            .check(&was)
            .expect("holds"),
        Checked::Unchanged
    );
    // A checkout that turned the line ends into CRLF still holds.
    let text = std::fs::read_to_string(&path).expect("written");
    std::fs::write(&path, text.replace('\n', "\r\n")).expect("rewrites");
    assert_eq!(
        Snapshot::at(&path)
            .update(false)
            .check(&was)
            .expect("holds"),
        Checked::Unchanged
    );

    let Err(SnapshotError::Changed { diff, .. }) = Snapshot::at(&path).update(false).check(&is)
    else {
        panic!("a changed surface must fail");
    };
    assert!(diff.is_breaking());
    // What the test prints: the tool, the pointer, what was and what is, and the class.
    let panicked = std::panic::catch_unwind(|| assert_snapshot_quiet(&is, &path))
        .expect_err("the helper panics on a change");
    let message = panicked
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    for expected in [
        "a BREAKING change",
        "tool `lookup-window`:",
        "breaking   /input_schema/required: field newly required",
        "was: (absent)",
        "is:  \"region\"",
        "compatible /input_schema/properties/region: field added",
        "  what the publishers send:\n",
        "  /published/mcp/inputSchema/properties/region: published form changed",
        "UPDATE_SURFACE=1",
    ] {
        assert!(
            message.contains(expected),
            "{expected:?} not in:\n{message}"
        );
    }
    // A file that is not a surface is said to be one.
    std::fs::write(&path, "{}").expect("rewrites");
    assert!(matches!(
        Snapshot::at(&path).update(false).check(&was),
        Err(SnapshotError::Invalid { .. })
    ));
}

/// `assert_snapshot` with the file compared, never rewritten, whatever the environment.
fn assert_snapshot_quiet(surface: &Surface, path: &std::path::Path) {
    Snapshot::at(path).update(false).assert(surface);
}

/// Set by `c2_update_surface_rewrites_the_file` for the copy of this binary it runs.
const CHILD_PATH: &str = "C2_SURFACE_CHILD_PATH";

#[test]
fn c2_update_surface_rewrites_the_file() {
    let path = scratch("update");
    let was = surface([tool::<Base>("lookup-window").build()]);
    Snapshot::at(&path)
        .update(true)
        .check(&was)
        .expect("writes");
    let run = |update: bool| {
        let mut child = std::process::Command::new(std::env::current_exe().expect("this test"));
        child
            .args(["c2_update_surface_child", "--exact", "--test-threads=1"])
            .env(CHILD_PATH, &path)
            .env_remove("UPDATE_SURFACE");
        if update {
            child.env("UPDATE_SURFACE", "1");
        }
        child.output().expect("the test binary runs")
    };
    // Without UPDATE_SURFACE the child's `assert_snapshot` fails and the file stays.
    let failed = run(false);
    assert!(!failed.status.success(), "the child must fail on a change");
    assert!(String::from_utf8_lossy(&failed.stdout).contains("field newly required"));
    assert_eq!(std::fs::read_to_string(&path).expect("kept"), was.to_json());
    // With it, the file holds the new surface.
    let updated = run(true);
    assert!(
        updated.status.success(),
        "{}",
        String::from_utf8_lossy(&updated.stdout)
    );
    let is = surface([tool::<WithRequired>("lookup-window").build()]);
    assert_eq!(
        std::fs::read_to_string(&path).expect("written"),
        is.to_json()
    );
}

/// Run by `c2_update_surface_rewrites_the_file` only: holds the changed surface against the
/// file it names, with `UPDATE_SURFACE` as that test sets it.
#[test]
fn c2_update_surface_child() {
    let Some(path) = std::env::var_os(CHILD_PATH) else {
        return;
    };
    let is = surface([tool::<WithRequired>("lookup-window").build()]);
    assert_snapshot(&is, path);
}
