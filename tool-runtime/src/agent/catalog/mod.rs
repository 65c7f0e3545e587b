//! Catalogs of many tools (Q1, Q2): tools declared `deferred_loading` are advertised only once
//! a search in the run returned them. A model whose provider runs its own tool search gets
//! them marked deferred ([`Model::native_tool_search`](crate::model::Model::native_tool_search));
//! any other gets [`SEARCH_TOOL`], a BM25 search over the tools' names, titles and
//! descriptions, run in the process through the one call pipeline. Either way a search
//! returns only tools the run's policies offer, and what a run loaded is part of its state.

mod index;

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};
use tool_core::violation::{ParseCx, Rule};
use tool_core::{Context, OutcomeKind, Tool};

use super::output::CallRecord;
use super::toolset::{ToolSet, ToolSetBuilder};
pub(crate) use index::SearchIndex;

/// The name of the local search tool (Q1).
pub const SEARCH_TOOL: &str = "search-tools";
/// How many tools a search returns when the model names no limit.
const DEFAULT_LIMIT: u64 = 5;
/// The most tools one search returns.
const MAX_LIMIT: u64 = 20;
/// The longest query taken, in bytes.
const MAX_QUERY_BYTES: usize = 500;

/// What an agent with deferred tools holds: which tools are deferred, and the index of them.
pub(crate) struct Catalog {
    /// For each of the agent's tools, whether it is deferred (Q1).
    pub(crate) deferred: Vec<bool>,
    /// The positions of the deferred tools, in declaration order.
    pub(crate) deferred_at: Vec<usize>,
    /// The position of the local search tool in the agent's tools.
    pub(crate) search_at: usize,
}

/// The name a search result gives a tool, from its declared name: an MCP server's published
/// name (M2).
pub(crate) type Rename = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// The per-run value the search tool reads from its call's context: which of the agent's
/// tools the run's policies offer (A2), set once the run knows, and the names a result gives
/// them (declared ones, unless an MCP server publishes others).
#[derive(Clone, Default)]
pub(crate) struct RunScope(Arc<OnceLock<Arc<[bool]>>>, Option<Rename>);

impl std::fmt::Debug for RunScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RunScope")
            .field(&self.0)
            .finish_non_exhaustive()
    }
}

impl RunScope {
    /// Records which tools the run's policies offer (shared with the run's offer).
    pub(crate) fn offer(&self, available: &Arc<[bool]>) {
        let _already = self.0.set(Arc::clone(available));
    }

    /// The scope of one search an MCP server answers: the tools `available` to its caller,
    /// named as `rename` publishes them.
    #[cfg(feature = "mcp")]
    pub(crate) fn of_request(available: Arc<[bool]>, rename: Rename) -> Self {
        Self(Arc::new(OnceLock::from(available)), Some(rename))
    }

    /// Which tools the scope offers, by position, once known.
    #[cfg(feature = "mcp")]
    pub(crate) fn offered(&self) -> Option<Arc<[bool]>> {
        self.0.get().cloned()
    }
}

impl Catalog {
    /// Whether the agent's tool at `at` is deferred.
    pub(crate) fn is_deferred(&self, at: usize) -> bool {
        self.deferred.get(at).copied().unwrap_or(false)
    }

    /// Loads into `loaded` each of `names` that is a deferred tool of `set` the run offers
    /// (`available`): a name the provider or the search gave that is anything else is
    /// ignored. Returns whether anything was added.
    pub(crate) fn load<'n>(
        &self,
        set: &ToolSet,
        available: &[bool],
        names: impl IntoIterator<Item = &'n str>,
        loaded: &mut BTreeSet<String>,
    ) -> bool {
        let mut added = false;
        for name in names {
            let Some(&at) = set.by_name.get(name) else {
                continue;
            };
            if self.is_deferred(at) && available.get(at).copied().unwrap_or(false) {
                added |= loaded.insert(name.to_owned());
            }
        }
        added
    }
}

/// Adds the local search tool to `set` when some tool of it is deferred (Q1), returning the
/// slot of the index it will search, which [`finish`] fills.
pub(crate) fn prepare(set: &mut ToolSetBuilder) -> Option<Arc<OnceLock<SearchIndex>>> {
    if !set.has_deferred_loading() {
        return None;
    }
    let index = Arc::new(OnceLock::new());
    set.tool(search_tool(Arc::clone(&index)));
    Some(index)
}

/// The catalog of a checked `set` whose search tool [`prepare`] added: the deferred tools
/// indexed (only those: a tool advertised from the start needs no search).
pub(crate) fn finish(index: Arc<OnceLock<SearchIndex>>, set: &ToolSet) -> Option<Catalog> {
    let search_at = *set.by_name.get(SEARCH_TOOL)?;
    let deferred: Vec<bool> = set.tools.iter().map(Tool::is_deferred_loading).collect();
    let deferred_at: Vec<usize> = (0..deferred.len())
        .filter(|&at| deferred[at] && at != search_at)
        .collect();
    let _already = index.set(SearchIndex::build(&set.tools, deferred_at.iter().copied()));
    Some(Catalog {
        deferred,
        deferred_at,
        search_at,
    })
}

/// The names the successful searches among `records` returned, read from their results
/// (a journaled search gives the same, W1).
pub(crate) fn found_by(records: &[CallRecord]) -> Vec<String> {
    let mut names = Vec::new();
    for record in records {
        if &*record.name == SEARCH_TOOL && record.kind() == OutcomeKind::Success {
            names.extend(found_in(record.text()));
        }
    }
    names
}

/// The names a search's result text returned (none when it is not a search's result).
pub(crate) fn found_in(text: &str) -> Vec<String> {
    let Ok(result) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let tools = result.get("tools").and_then(Value::as_array);
    (tools.into_iter().flatten())
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// The local search tool over `index`, which the agent fills once its tools are checked.
pub(crate) fn search_tool(index: Arc<OnceLock<SearchIndex>>) -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Words describing the tool you need (what it does, its name).",
                "maxLength": MAX_QUERY_BYTES,
            },
            "limit": {
                "type": "integer",
                "description": "How many tools to return (default 5).",
                "minimum": 1,
                "maximum": MAX_LIMIT,
            },
        },
        "required": ["query"],
        "additionalProperties": false,
    });
    Tool::builder(
        SEARCH_TOOL,
        "Searches the tools that are not loaded yet by what they do, and loads the best \
         matches: a returned tool can be called from the next step on.",
    )
    .read_only()
    .dynamic_handler(schema, validate, move |ctx: Context, args: Value| {
        let found = search(&index, &ctx, &args);
        async move { Ok::<_, std::convert::Infallible>(found) }
    })
    .build()
}

/// The search tool's arguments: a query string within its bound, an optional limit.
fn validate(args: &Value, cx: &mut ParseCx) {
    match args.get("query").and_then(Value::as_str) {
        None => cx.violate_at("query", Rule::Required, "is required and must be a string"),
        Some(query) if query.len() > MAX_QUERY_BYTES => cx.violate_at(
            "query",
            Rule::MaxLength,
            format!("must be at most {MAX_QUERY_BYTES} bytes"),
        ),
        Some(_) => {}
    }
    if let Some(limit) = args.get("limit")
        && !limit.as_u64().is_some_and(|n| (1..=MAX_LIMIT).contains(&n))
    {
        cx.violate_at(
            "limit",
            Rule::Maximum,
            format!("must be a whole number from 1 to {MAX_LIMIT}"),
        );
    }
    if let Some(object) = args.as_object()
        && let Some(other) = object.keys().find(|k| *k != "query" && *k != "limit")
    {
        cx.violate_at(
            other,
            Rule::AdditionalProperties,
            "is not an argument of the search",
        );
    }
}

/// A search: the best matches the run offers, by name and description. (Never inlined, so
/// that a profiler can count one search alone: `benches/harness/src/bin/catalog.rs`.)
#[inline(never)]
fn search(index: &OnceLock<SearchIndex>, ctx: &Context, args: &Value) -> Value {
    let query = args
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_LIMIT);
    let limit = usize::try_from(limit.min(MAX_LIMIT)).unwrap_or(1);
    // A call outside a run that set its scope offers nothing.
    let scope = ctx.get::<RunScope>();
    let offered = scope.and_then(|scope| scope.0.get());
    let (Some(index), Some(offered)) = (index.get(), offered) else {
        return json!({"tools": []});
    };
    let allowed = |at: usize| offered.get(at).copied().unwrap_or(false);
    let rename = scope.and_then(|scope| scope.1.as_ref());
    let found: Vec<Value> = (index.search(query, allowed, limit).into_iter())
        .map(|doc| {
            let name = rename.map_or_else(|| doc.name.to_string(), |rename| rename(&doc.name));
            json!({"name": name, "description": &*doc.description})
        })
        .collect();
    json!({"tools": found})
}
