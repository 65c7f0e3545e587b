//! The changes between two surfaces, each at its JSON pointer with what was and what is, and
//! classified (C2).

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use super::classify::{ChangeKind, Compatibility, Part};

// The changes within one JSON Schema, keyword by keyword.
mod schema;

/// One change of one tool: where it is (a JSON pointer into the tool's entry), what was there
/// and what is, and what kind of change it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    tool: String,
    part: Part,
    pointer: String,
    was: Option<Value>,
    is: Option<Value>,
    kind: ChangeKind,
}

impl Change {
    /// The tool's name (its old name for a rename).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The part of the tool's entry that changed.
    pub fn part(&self) -> &Part {
        &self.part
    }

    /// Where, as a JSON pointer into the tool's entry (`/input_schema/properties/days/maximum`);
    /// empty for a tool added, removed or renamed, whose [`Change::was`] and [`Change::is`]
    /// are then its names.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// What was there; `None` when nothing was (an addition). For a field newly required or an
    /// enum value added, the name or value concerned is in [`Change::is`] alone.
    pub fn was(&self) -> Option<&Value> {
        self.was.as_ref()
    }

    /// What is there now; `None` when nothing is (a removal).
    pub fn is(&self) -> Option<&Value> {
        self.is.as_ref()
    }

    /// What kind of change it is.
    pub fn kind(&self) -> &ChangeKind {
        &self.kind
    }

    /// Whether it can break a caller of the tool.
    pub fn compatibility(&self) -> Compatibility {
        self.kind.compatibility(&self.part)
    }

    /// Whether it can break a caller of the tool.
    pub fn is_breaking(&self) -> bool {
        self.compatibility() == Compatibility::Breaking
    }
}

/// The changes from one surface to another, tool by tool in the order of their names, and
/// within a tool in the order of their pointers. Its `Display` is the readable diff.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SurfaceDiff {
    changes: Vec<Change>,
}

impl SurfaceDiff {
    /// Every change.
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Whether any change can break a caller: what a CI refuses while it lets compatible
    /// changes through.
    pub fn is_breaking(&self) -> bool {
        self.changes.iter().any(Change::is_breaking)
    }

    /// The changes that can break a caller.
    pub fn breaking(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|change| change.is_breaking())
    }

    /// The changes that cannot.
    pub fn compatible(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|change| !change.is_breaking())
    }
}

/// The longest a value is quoted in the readable diff, in characters.
const QUOTE_LIMIT: usize = 160;

/// A value, compact, cut at [`QUOTE_LIMIT`] characters; `(absent)` for none.
fn quote(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "(absent)".to_owned();
    };
    let text = value.to_string();
    match text.char_indices().nth(QUOTE_LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

impl fmt::Display for SurfaceDiff {
    /// Tool by tool: the changes of the declaration, each with its class, pointer, kind and
    /// what was and is; then the changes of what each publisher sends, which follow from
    /// those (or, alone, from a driver's rendering).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let published = |change: &&Change| matches!(change.part, Part::Published(_));
        let sent = self.changes.iter().filter(published).count();
        let breaking = self.breaking().count();
        let compatible = self
            .compatible()
            .filter(|change| !published(change))
            .count();
        writeln!(
            f,
            "{breaking} breaking change(s), {compatible} compatible; {sent} change(s) of what the publishers send:"
        )?;
        let mut at = 0;
        while let Some(first) = self.changes.get(at) {
            let tool = &self.changes[at..];
            let end = tool
                .iter()
                .position(|change| change.tool != first.tool)
                .unwrap_or(tool.len());
            let tool = &tool[..end];
            at += end;
            writeln!(f, "tool `{}`:", first.tool)?;
            for change in tool.iter().filter(|change| !published(change)) {
                line(f, change, &format!("{:<10} ", change.compatibility()))?;
            }
            if tool.iter().any(|change| published(&change)) {
                writeln!(f, "  what the publishers send:")?;
            }
            for change in tool.iter().filter(published) {
                let class = if change.is_breaking() {
                    "breaking   "
                } else {
                    ""
                };
                line(f, change, class)?;
            }
        }
        Ok(())
    }
}

/// One change of the readable diff: its class (if given), pointer and kind, then what was
/// and what is.
fn line(f: &mut fmt::Formatter<'_>, change: &Change, class: &str) -> fmt::Result {
    let pointer = if change.pointer.is_empty() {
        "(the tool)"
    } else {
        &change.pointer
    };
    writeln!(f, "  {class}{pointer}: {}", change.kind)?;
    writeln!(f, "{:13}was: {}", "", quote(change.was.as_ref()))?;
    writeln!(f, "{:13}is:  {}", "", quote(change.is.as_ref()))
}

/// The changes from the tools `was` to the tools `is` (each an entry by name).
pub(super) fn diff(was: &BTreeMap<String, Value>, is: &BTreeMap<String, Value>) -> SurfaceDiff {
    let mut out = Changes::default();
    let removed: Vec<&String> = was.keys().filter(|name| !is.contains_key(*name)).collect();
    let mut added: Vec<&String> = is.keys().filter(|name| !was.contains_key(*name)).collect();
    for name in removed {
        let renamed = added.iter().position(|new| {
            was.get(name)
                .zip(is.get(*new))
                .is_some_and(|(old, new)| same_declaration(old, new))
        });
        let (kind, new_name) = match renamed {
            Some(at) => {
                let to = added.remove(at).clone();
                (
                    ChangeKind::ToolRenamed { to: to.clone() },
                    Some(Value::from(to)),
                )
            }
            None => (ChangeKind::ToolRemoved, None),
        };
        out.tool = name.clone();
        let old_name = Value::from(name.as_str());
        out.push(
            Part::Tool,
            String::new(),
            Some(&old_name),
            new_name.as_ref(),
            kind,
        );
    }
    for name in added {
        out.tool = name.clone();
        let new_name = Value::from(name.as_str());
        out.push(
            Part::Tool,
            String::new(),
            None,
            Some(&new_name),
            ChangeKind::ToolAdded,
        );
    }
    for (name, old) in was {
        if let Some(new) = is.get(name) {
            out.tool = name.clone();
            out.entry(old, new);
        }
    }
    let mut changes = out.changes;
    changes.sort_by(|a, b| (&a.tool, &a.pointer).cmp(&(&b.tool, &b.pointer)));
    SurfaceDiff { changes }
}

/// Whether two entries declare the same tool under two names: the same description and
/// input schema.
fn same_declaration(was: &Value, is: &Value) -> bool {
    ["description", "input_schema"]
        .iter()
        .all(|key| was.get(key) == is.get(key))
}

/// The changes found so far, and the tool being compared.
#[derive(Default)]
struct Changes {
    tool: String,
    changes: Vec<Change>,
}

/// A JSON pointer one token below `base` (`~` and `/` escaped).
fn below(base: &str, token: &str) -> String {
    format!("{base}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// The union of two objects' keys, in order.
fn keys<'a>(was: Option<&'a Value>, is: Option<&'a Value>) -> Vec<&'a String> {
    let mut out: Vec<&String> = [was, is]
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .flat_map(|map| map.keys())
        .collect();
    out.sort();
    out.dedup();
    out
}

impl Changes {
    fn push(
        &mut self,
        part: Part,
        pointer: String,
        was: Option<&Value>,
        is: Option<&Value>,
        kind: ChangeKind,
    ) {
        self.changes.push(Change {
            tool: self.tool.clone(),
            part,
            pointer,
            was: was.cloned(),
            is: is.cloned(),
            kind,
        });
    }

    /// The changes of one tool's entry.
    fn entry(&mut self, was: &Value, is: &Value) {
        for key in keys(Some(was), Some(is)) {
            let (old, new) = (was.get(key), is.get(key));
            if old == new {
                continue;
            }
            let at = below("", key);
            match key.as_str() {
                "input_schema" => self.schema(&Part::Input, &at, old, new),
                "output_schema" => self.output(&at, old, new),
                "published" => self.published(&at, old, new),
                "hints" => self.leaves(&Part::Tool, &at, old, new, &ChangeKind::HintChanged),
                "title" | "description" => {
                    self.push(Part::Tool, at, old, new, ChangeKind::Documentation);
                }
                "approval" | "availability_policy" => {
                    let on = new == Some(&Value::Bool(true));
                    let kind = match (key.as_str(), on) {
                        ("approval", true) => ChangeKind::ApprovalNewlyRequired,
                        ("approval", false) => ChangeKind::ApprovalNoLongerRequired,
                        (_, true) => ChangeKind::PolicyAdded,
                        (_, false) => ChangeKind::PolicyRemoved,
                    };
                    self.push(Part::Tool, at, old, new, kind);
                }
                "deferred_loading" => {
                    // A document written before the field existed held no deferred tool.
                    let on = |value: Option<&Value>| value == Some(&Value::Bool(true));
                    let kind = match (on(old), on(new)) {
                        (false, true) => ChangeKind::LoadingDeferred,
                        (true, false) => ChangeKind::LoadingNoLongerDeferred,
                        _ => continue,
                    };
                    self.push(Part::Tool, at, old, new, kind);
                }
                "sequential" | "retries" | "deferred" => {
                    self.push(Part::Tool, at, old, new, ChangeKind::ExecutionChanged);
                }
                _ => self.push(Part::Tool, at, old, new, ChangeKind::Other),
            }
        }
    }

    /// The output schema: added, removed, or changed keyword by keyword.
    fn output(&mut self, at: &str, was: Option<&Value>, is: Option<&Value>) {
        let declared = |value: Option<&Value>| value.is_some_and(|v| !v.is_null());
        match (declared(was), declared(is)) {
            (false, true) => {
                self.push(
                    Part::Output,
                    at.to_owned(),
                    was,
                    is,
                    ChangeKind::OutputSchemaAdded,
                );
            }
            (true, false) => {
                self.push(
                    Part::Output,
                    at.to_owned(),
                    was,
                    is,
                    ChangeKind::OutputSchemaRemoved,
                );
            }
            _ => self.schema(&Part::Output, at, was, is),
        }
    }

    /// What each publisher sends: every changed leaf, the MCP name apart.
    fn published(&mut self, at: &str, was: Option<&Value>, is: Option<&Value>) {
        for publisher in keys(was, is) {
            let old = was.and_then(|v| v.get(publisher));
            let new = is.and_then(|v| v.get(publisher));
            let part = Part::Published(publisher.clone());
            let here = below(at, publisher);
            let (old_name, new_name) = (
                old.and_then(|v| v.get("name")),
                new.and_then(|v| v.get("name")),
            );
            if publisher == crate::surface::render::MCP
                && old.is_some()
                && new.is_some()
                && old_name != new_name
            {
                let name_at = below(&here, "name");
                self.push(
                    part.clone(),
                    name_at,
                    old_name,
                    new_name,
                    ChangeKind::PublishedNameChanged,
                );
                let strip = |v: Option<&Value>| {
                    v.and_then(Value::as_object).map(|map| {
                        let mut map = map.clone();
                        map.remove("name");
                        Value::Object(map)
                    })
                };
                let (old, new) = (strip(old), strip(new));
                self.leaves(
                    &part,
                    &here,
                    old.as_ref(),
                    new.as_ref(),
                    &ChangeKind::Published,
                );
            } else {
                self.leaves(&part, &here, old, new, &ChangeKind::Published);
            }
        }
    }

    /// Every changed leaf below `at`, of one `kind`: objects compared member by member,
    /// anything else as a whole.
    fn leaves(
        &mut self,
        part: &Part,
        at: &str,
        was: Option<&Value>,
        is: Option<&Value>,
        kind: &ChangeKind,
    ) {
        if was == is {
            return;
        }
        match (was, is) {
            (Some(Value::Object(_)), Some(Value::Object(_))) => {
                for key in keys(was, is) {
                    let (old, new) = (was.and_then(|v| v.get(key)), is.and_then(|v| v.get(key)));
                    self.leaves(part, &below(at, key), old, new, kind);
                }
            }
            _ => self.push(part.clone(), at.to_owned(), was, is, kind.clone()),
        }
    }
}
