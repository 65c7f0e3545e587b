//! An rmcp server's tools, moved over (C3, `tool-runtime/src/guide/from_rmcp.md`): the input types are the ones
//! written for rmcp, unchanged (`serde::Deserialize` and `schemars::JsonSchema`); each
//! `#[tool]` method becomes a `#[tool]` fn taking the same `Parameters<T>`, and what the
//! method read from `&self` it takes from the context (C1).

use std::sync::{Arc, Mutex, PoisonError};

use tool_runtime::mcp::{McpNaming, McpServer, McpServerBuilder};
use tool_runtime::schemars;
use tool_runtime::{Context, IntoTool, Parameters, ToolError, tool};

// ─── The input types, as they were written for rmcp ─────────────────────────────────────────

/// Two numbers to add.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct SumRequest {
    /// The first number.
    pub a: i32,
    /// The second number.
    pub b: i32,
}

/// How urgent a note is.
#[derive(Debug, Clone, Copy, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Whenever there is time.
    Low,
    /// Before anything else.
    High,
}

/// A note to keep.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct NoteRequest {
    /// The note's title.
    #[schemars(length(min = 1, max = 80))]
    pub title: String,
    /// Labels to file it under.
    #[serde(default)]
    pub tags: Vec<String>,
    /// How urgent it is, if it is.
    pub priority: Option<Priority>,
}

// ─── The state the rmcp server kept in `self` ───────────────────────────────────────────────

/// The notes kept so far: what the rmcp server held in a field, now a value of the context.
#[derive(Debug, Clone, Default)]
pub struct Notes {
    kept: Arc<Mutex<Vec<String>>>,
}

impl Notes {
    /// The notes kept so far, oldest first.
    pub fn titles(&self) -> Vec<String> {
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

// ─── The tools ──────────────────────────────────────────────────────────────────────────────

/// Sum two numbers.
#[tool]
pub async fn sum(Parameters(SumRequest { a, b }): Parameters<SumRequest>) -> String {
    (i64::from(a) + i64::from(b)).to_string()
}

/// Keep a note.
#[tool]
pub async fn add_note(
    notes: &Notes,
    Parameters(note): Parameters<NoteRequest>,
) -> Result<String, ToolError> {
    let mut kept = notes.kept.lock().unwrap_or_else(PoisonError::into_inner);
    if kept.contains(&note.title) {
        return Err(ToolError::new("a note with this title is kept already"));
    }
    kept.push(note.title.clone());
    let urgency = match note.priority {
        Some(Priority::High) => " (urgent)",
        Some(Priority::Low) | None => "",
    };
    Ok(format!(
        "kept note {} of {}{urgency}, tagged {:?}",
        kept.len(),
        note.title,
        note.tags
    ))
}

/// The server: the two tools under the snake_case names rmcp gave them (M2), each request's
/// context holding `notes`.
pub fn server(notes: Notes) -> McpServerBuilder {
    McpServer::builder()
        .name("notes")
        .naming(McpNaming::SnakeCase)
        .tools([Sum.into_tool(), AddNote.into_tool()])
        .context(move |_request| {
            let ctx = Context::new().with(notes.clone());
            async move { Ok::<_, std::convert::Infallible>(ctx) }
        })
}
