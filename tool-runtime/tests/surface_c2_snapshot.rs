//! C2: the tool surface renders as one deterministic document holding what each publisher
//! sends, whatever order the tools were registered in and whichever holds them (a list, an
//! agent, an MCP server); the snapshot helper fails with the classified diff and rewrites its
//! file when `UPDATE_SURFACE=1`.
#![cfg(all(feature = "openai", feature = "anthropic", feature = "mcp"))]

mod support {
    pub mod surface;
}

use serde_json::{Value, json};
use support::surface::{Base, WithOptional, WithRequired, surface, tool};
use tool_runtime::mcp::McpServer;
use tool_runtime::providers::anthropic::Anthropic;
use tool_runtime::providers::openai::{OpenAiChat, OpenAiResponses};
use tool_runtime::surface::{Checked, Snapshot, SnapshotError, Surface, assert_snapshot};
use tool_runtime::{Agent, Model, OfflineModel, Tool};

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
