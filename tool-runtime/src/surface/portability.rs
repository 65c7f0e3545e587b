//! The portability report (V4): per tool and per publisher, what the publisher's rendering of
//! the tool's input schema loses against the neutral schema the parser enforces.
//!
//! It is read off the surface itself, by walking each tool's `input_schema` beside each
//! rendering's schema: a keyword the rendering lacks moved into the description (its name
//! is in the text the rendering added there), was rewritten (the rendering has another
//! keyword in its place: `const` as `enum`, a `type` list as `anyOf`), was inlined (a `$ref`
//! replaced by its definition), or was dropped; a keyword the rendering has with another
//! value changed (a field made required, `null` added to a type); a tool the dialect cannot
//! take at all is unsupported. The parser still enforces the whole neutral schema (R5): the
//! report says what the model is no longer told.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value, json};

use super::render;

/// Where each publisher's rendering holds the tool's input schema.
const SCHEMA_AT: &[(&str, &str)] = &[
    (render::OPENAI_CHAT_STRICT, "/function/parameters"),
    (render::OPENAI_CHAT, "/function/parameters"),
    (render::OPENAI_RESPONSES_STRICT, "/parameters"),
    (render::ANTHROPIC, "/input_schema"),
    (render::ANTHROPIC_STRICT, "/input_schema"),
    (render::GEMINI, "/parametersJsonSchema"),
    (render::BEDROCK, "/toolSpec/inputSchema/json"),
    (render::MCP, "/inputSchema"),
];

/// Keywords holding a map of subschemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "$defs",
    "patternProperties",
    "dependentSchemas",
];

/// Keywords holding a list of subschemas.
const SCHEMA_LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// Keywords holding one subschema.
const SCHEMAS: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// Keywords a rendering may add beside any other without replacing it.
const ADDED_ANYWHERE: &[&str] = &["description", "additionalProperties"];

/// The deepest nesting the walk follows.
const MAX_DEPTH: usize = 64;

/// What became of one keyword of the neutral schema in a publisher's rendering.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Fate {
    /// Moved into the description, as text.
    Described,
    /// Rewritten as these keywords of the dialect.
    Rewritten(Vec<String>),
    /// A `$ref` replaced by its definition (or `$defs` once every reference was).
    Inlined,
    /// Kept with another value (shown as the rendering has it).
    Changed(String),
    /// Gone, and said nowhere.
    Dropped,
    /// The dialect cannot express the schema: the provider is not offered the tool.
    Unsupported(String),
}

/// One keyword of a tool's neutral input schema and what a publisher made of it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Loss {
    /// The keyword's JSON pointer in the neutral input schema (`/properties/days/maximum`).
    pub at: String,
    /// What became of it.
    pub fate: Fate,
}

/// Per tool and per publisher, what each rendering loses (V4): [`Surface::portability`].
///
/// [`Surface::portability`]: super::Surface::portability
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Portability {
    tools: BTreeMap<String, BTreeMap<String, Vec<Loss>>>,
}

impl Portability {
    /// The report of the surface entries `tools` (by tool name).
    pub(super) fn of(tools: &BTreeMap<String, Value>) -> Self {
        let tools = tools
            .iter()
            .map(|(name, entry)| (name.clone(), tool(entry)))
            .collect();
        Self { tools }
    }

    /// What `publisher`'s rendering of `tool` loses (empty: nothing), or `None` when the
    /// surface has no such tool or rendering.
    pub fn losses(&self, tool: &str, publisher: &str) -> Option<&[Loss]> {
        Some(self.tools.get(tool)?.get(publisher)?.as_slice())
    }

    /// The publishers that lose something of `tool`.
    pub fn lossy(&self, tool: &str) -> impl Iterator<Item = &str> {
        (self.tools.get(tool).into_iter().flatten())
            .filter(|(_, losses)| !losses.is_empty())
            .map(|(publisher, _)| publisher.as_str())
    }

    /// The report as the surface document holds it: `{tool: {publisher: [loss, …]}}`, each
    /// loss `{"at": pointer, "fate": …}` (with `"as"` for a rewriting, `"is"` for a change,
    /// `"reason"` for an unsupported schema).
    pub fn to_value(&self) -> Value {
        let tools = self.tools.iter().map(|(name, publishers)| {
            let publishers = publishers
                .iter()
                .map(|(publisher, losses)| {
                    let losses = losses.iter().map(Loss::to_value).collect();
                    (publisher.clone(), Value::Array(losses))
                })
                .collect::<Map<_, _>>();
            (name.clone(), Value::Object(publishers))
        });
        Value::Object(tools.collect())
    }
}

impl Loss {
    fn to_value(&self) -> Value {
        match &self.fate {
            Fate::Described => json!({"at": self.at, "fate": "described"}),
            Fate::Rewritten(keywords) => {
                json!({"at": self.at, "fate": "rewritten", "as": keywords})
            }
            Fate::Inlined => json!({"at": self.at, "fate": "inlined"}),
            Fate::Changed(is) => json!({"at": self.at, "fate": "changed", "is": is}),
            Fate::Dropped => json!({"at": self.at, "fate": "dropped"}),
            Fate::Unsupported(reason) => {
                json!({"at": self.at, "fate": "unsupported", "reason": reason})
            }
        }
    }
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.at.is_empty() { "/" } else { &self.at };
        match &self.fate {
            Fate::Described => write!(f, "{at}: moved into the description"),
            Fate::Rewritten(keywords) => write!(f, "{at}: rewritten as {}", keywords.join(", ")),
            Fate::Inlined => write!(f, "{at}: inlined"),
            Fate::Changed(is) => write!(f, "{at}: changed to {is}"),
            Fate::Dropped => write!(f, "{at}: dropped"),
            Fate::Unsupported(reason) => write!(f, "{at}: not offered ({reason})"),
        }
    }
}

/// One line per loss: `tool  publisher  loss`; publishers that lose nothing are left out.
impl fmt::Display for Portability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (tool, publishers) in &self.tools {
            for (publisher, losses) in publishers {
                for loss in losses {
                    writeln!(f, "{tool}  {publisher}  {loss}")?;
                }
            }
        }
        Ok(())
    }
}

/// What each publisher's rendering of the surface entry `entry` loses.
fn tool(entry: &Value) -> BTreeMap<String, Vec<Loss>> {
    let neutral = entry.get("input_schema").unwrap_or(&Value::Null);
    let Some(published) = entry.get("published").and_then(Value::as_object) else {
        return BTreeMap::new();
    };
    let mut out = BTreeMap::new();
    for (publisher, rendering) in published {
        let losses = if let Some(why) = rendering.get("unsupported") {
            let at = why.get("at").and_then(Value::as_str).unwrap_or_default();
            let reason = why
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or_default();
            vec![Loss {
                at: at.to_owned(),
                fate: Fate::Unsupported(reason.to_owned()),
            }]
        } else {
            let Some(schema) = schema_of(publisher, rendering) else {
                continue;
            };
            let mut walk = Walk {
                root: neutral,
                keeps_refs: schema.as_object().is_some_and(mentions_ref),
                inlining: Vec::new(),
                losses: BTreeSet::new(),
            };
            walk.node("", neutral, schema, 0);
            walk.losses.into_iter().collect()
        };
        out.insert(publisher.clone(), losses);
    }
    out
}

/// The input schema inside `publisher`'s rendering, for the publishers the report knows.
fn schema_of<'a>(publisher: &str, rendering: &'a Value) -> Option<&'a Value> {
    let (_, pointer) = SCHEMA_AT.iter().find(|(known, _)| *known == publisher)?;
    rendering.pointer(pointer)
}

/// A neutral node beside the rendering's, while its keywords are compared.
struct Node<'a, 'n> {
    neutral: &'n Map<String, Value>,
    published: &'a Value,
    /// The text the rendering added to the node's descriptions.
    added: String,
}

/// The walk of a neutral schema beside a rendering of it.
struct Walk<'a> {
    root: &'a Value,
    /// Whether the rendering keeps a `$ref` anywhere (else its `$defs` were inlined).
    keeps_refs: bool,
    /// The `$ref`s being inlined, outermost first (a reference that recurs is not followed).
    inlining: Vec<&'a str>,
    losses: BTreeSet<Loss>,
}

impl<'a> Walk<'a> {
    fn lose(&mut self, at: String, fate: Fate) {
        self.losses.insert(Loss { at, fate });
    }

    /// Compares the neutral node at `at` with the rendering's node.
    fn node(&mut self, at: &str, neutral: &'a Value, published: &'a Value, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let (Some(neutral), Some(map)) = (neutral.as_object(), published.as_object()) else {
            if neutral != published {
                self.lose(at.to_owned(), Fate::Changed(published.to_string()));
            }
            return;
        };
        // What the rendering added to the node's text, read once for all its missing keywords.
        let added =
            (neutral.keys().any(|k| !map.contains_key(k))).then(|| added_text(neutral, map));
        let node = Node {
            neutral,
            published,
            added: added.unwrap_or_default(),
        };
        for (keyword, value) in neutral {
            let here = format!("{at}/{}", escape(keyword));
            match map.get(keyword) {
                Some(kept) => self.kept(&here, keyword, value, kept, depth),
                None => self.missing(&here, keyword, value, &node, depth),
            }
        }
    }

    /// A keyword both have: its subschemas compared, or its value.
    fn kept(&mut self, here: &str, keyword: &str, value: &'a Value, kept: &'a Value, depth: usize) {
        let depth = depth + 1;
        if SCHEMA_MAPS.contains(&keyword)
            && let (Some(value), Some(kept)) = (value.as_object(), kept.as_object())
        {
            for (name, schema) in value {
                let at = format!("{here}/{}", escape(name));
                match kept.get(name) {
                    Some(rendered) => self.node(&at, schema, rendered, depth),
                    None => self.lose(at, Fate::Dropped),
                }
            }
        } else if SCHEMA_LISTS.contains(&keyword)
            && let (Some(value), Some(kept)) = (value.as_array(), kept.as_array())
            && value.len() == kept.len()
        {
            for (i, (schema, rendered)) in value.iter().zip(kept).enumerate() {
                self.node(&format!("{here}/{i}"), schema, rendered, depth);
            }
        } else if SCHEMAS.contains(&keyword) && value.is_object() && kept.is_object() {
            self.node(here, value, kept, depth);
        } else if keyword == "description" {
            // Text appended (what moved there) is not a loss; the text replaced is.
            let (Some(was), Some(is)) = (value.as_str(), kept.as_str()) else {
                return;
            };
            if !is.starts_with(was) {
                self.lose(here.to_owned(), Fate::Changed(kept.to_string()));
            }
        } else if value != kept {
            self.lose(here.to_owned(), Fate::Changed(kept.to_string()));
        }
    }

    /// A keyword the rendering lacks: inlined, described, rewritten or dropped.
    fn missing(
        &mut self,
        here: &str,
        keyword: &str,
        value: &'a Value,
        node: &Node<'a, '_>,
        depth: usize,
    ) {
        if keyword == "$ref" {
            return self.inlined(here, value, node.published, depth);
        }
        let (neutral, Some(published)) = (node.neutral, node.published.as_object()) else {
            return;
        };
        if keyword == "$defs" && !self.keeps_refs {
            return self.lose(here.to_owned(), Fate::Inlined);
        }
        if node.added.contains(keyword) {
            return self.lose(here.to_owned(), Fate::Described);
        }
        let instead: Vec<String> = (published.keys())
            .filter(|k| !neutral.contains_key(*k) && !ADDED_ANYWHERE.contains(&k.as_str()))
            .cloned()
            .collect();
        let fate = if instead.is_empty() {
            Fate::Dropped
        } else {
            Fate::Rewritten(instead)
        };
        self.lose(here.to_owned(), fate);
    }

    /// A `$ref` the rendering replaced by its definition: the definition compared with what
    /// the rendering has in its place.
    fn inlined(&mut self, here: &str, reference: &'a Value, published: &'a Value, depth: usize) {
        self.lose(here.to_owned(), Fate::Inlined);
        let Some(reference) = reference.as_str() else {
            return;
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            return;
        };
        if self.inlining.contains(&reference) {
            return;
        }
        let Some(definition) = self.root.pointer(pointer) else {
            return;
        };
        self.inlining.push(reference);
        // The rendering's node as a whole stands for the definition.
        self.node(pointer, definition, published, depth + 1);
        self.inlining.pop();
    }
}

/// Whether a `$ref` is left anywhere in `schema`.
fn mentions_ref(schema: &Map<String, Value>) -> bool {
    schema.iter().any(|(key, value)| {
        key == "$ref"
            || match value {
                Value::Object(map) => mentions_ref(map),
                Value::Array(items) => items.iter().filter_map(Value::as_object).any(mentions_ref),
                _ => false,
            }
    })
}

/// The text a rendering added to the node's description, and to the descriptions of the
/// branches it put in the node's place (a `type` list rewritten as `anyOf`).
fn added_text(neutral: &Map<String, Value>, published: &Map<String, Value>) -> String {
    let was = neutral
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut text = match published.get("description").and_then(Value::as_str) {
        Some(is) => is.strip_prefix(was).unwrap_or(is).to_owned(),
        None => String::new(),
    };
    for branches in ["anyOf", "oneOf"]
        .iter()
        .filter(|k| !neutral.contains_key(**k))
    {
        for branch in published
            .get(*branches)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(description) = branch.get("description").and_then(Value::as_str) {
                text.push('\n');
                text.push_str(description);
            }
        }
    }
    text
}

/// A JSON pointer token (`~` as `~0`, `/` as `~1`).
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
