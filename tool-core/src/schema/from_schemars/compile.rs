//! The published schema of a schemars input compiled into the nodes the parser walks (C3):
//! each `$ref` resolved to the node it names once, so a recursive type is a cycle of nodes.

use std::collections::HashMap;

use regex::Regex;
use serde_json::{Map, Value};

use super::publish::TYPES;
use crate::schema::{Format, Num, Pattern, Rules, SchemaError, Unsupported};

/// The index of a node.
pub(super) type NodeId = usize;

/// A set of JSON types, one bit each in the order of [`TYPES`]; empty admits every type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Types(u8);

impl Types {
    pub(super) const NULL: u8 = 1;
    pub(super) const INTEGER: u8 = 1 << 2;
    pub(super) const NUMBER: u8 = 1 << 3;
    pub(super) const STRING: u8 = 1 << 4;
    pub(super) const ARRAY: u8 = 1 << 5;
    pub(super) const OBJECT: u8 = 1 << 6;

    fn of_name(name: &str) -> u8 {
        TYPES
            .iter()
            .position(|t| *t == name)
            .map_or(0, |at| 1 << at)
    }

    pub(super) fn from_bits(bits: u8) -> Types {
        Types(bits)
    }

    pub(super) fn bits(self) -> u8 {
        self.0
    }

    pub(super) fn any(self) -> bool {
        self.0 == 0
    }

    pub(super) fn admits(self, types: u8) -> bool {
        self.any() || self.0 & types != 0
    }

    /// The names of these types, `null` left out unless it is the only one: what the parser
    /// says it expected (`a string or an integer`).
    pub(super) fn expected(self) -> String {
        let named: Vec<&str> = TYPES
            .iter()
            .enumerate()
            .filter(|(at, _)| self.0 & (1 << at) != 0)
            .map(|(_, t)| *t)
            .collect();
        crate::schema::Expected(&named).to_string()
    }
}

/// Whether a JSON number holds an integer (`3` or `3.0`).
pub(super) fn is_integral(n: &serde_json::Number) -> bool {
    n.is_i64()
        || n.is_u64()
        || n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// What an object admits besides its declared properties.
#[derive(Debug, Clone, Copy)]
pub(super) enum Extra {
    /// Anything (no `additionalProperties`).
    Any,
    /// Nothing (`additionalProperties: false`).
    Nothing,
    /// Values of a schema (a map).
    Schema(NodeId),
}

/// The alternatives of an `anyOf` or `oneOf`.
#[derive(Debug, Clone, Default)]
pub(super) struct Alternatives {
    pub(super) branches: Vec<NodeId>,
    /// `oneOf`: a value fitting two branches breaks it.
    pub(super) exclusive: bool,
}

/// One schema node.
#[derive(Debug)]
pub(super) struct Node {
    /// The node a `$ref` names; its other keywords are annotations.
    pub(super) reference: Option<NodeId>,
    /// Whether this node admits nothing (`false`).
    pub(super) nothing: bool,
    pub(super) types: Types,
    /// `enum`, or `const` as an enum of one.
    pub(super) values: Option<Vec<Value>>,
    /// `minLength`, `maxLength`, `format`, and the number bounds, as the derive's rules.
    pub(super) rules: Rules,
    pub(super) pattern: Option<(String, Regex)>,
    /// `format: float`: a number an `f32` holds.
    pub(super) float32: bool,
    pub(super) prefix_items: Vec<NodeId>,
    /// `items`: `None` admits any item, `Some(None)` none past the prefix.
    pub(super) items: Option<Option<NodeId>>,
    pub(super) properties: Vec<(String, NodeId)>,
    pub(super) required: Vec<String>,
    pub(super) extra: Option<Extra>,
    pub(super) alternatives: Option<Alternatives>,
    /// Whether `null` is a value of this node (else, at a member, it is that member absent).
    pub(super) accepts_null: bool,
}

impl Default for Node {
    fn default() -> Self {
        Node {
            reference: None,
            nothing: false,
            types: Types::default(),
            values: None,
            rules: Rules::NONE,
            pattern: None,
            float32: false,
            prefix_items: Vec::new(),
            items: None,
            properties: Vec::new(),
            required: Vec::new(),
            extra: None,
            alternatives: None,
            accepts_null: false,
        }
    }
}

/// The nodes of one schema; the root is node 0.
#[derive(Debug)]
pub(super) struct Nodes {
    pub(super) nodes: Vec<Node>,
}

/// Compiles `published` (what `publish` made).
///
/// # Errors
///
/// Returns [`SchemaError::Unsupported`] for a `$ref` that names no definition or a pattern
/// that does not compile; `publish` has ruled both out.
pub(super) fn compile(published: &Value) -> Result<Nodes, SchemaError> {
    let defs = published
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut compiler = Compiler {
        nodes: vec![Node::default()],
        defs,
        named: HashMap::new(),
    };
    compiler.fill(0, published)?;
    let mut nodes = compiler.nodes;
    settle_nulls(&mut nodes);
    Ok(Nodes { nodes })
}

struct Compiler {
    nodes: Vec<Node>,
    defs: Map<String, Value>,
    named: HashMap<String, NodeId>,
}

impl Compiler {
    fn add(&mut self, schema: &Value) -> Result<NodeId, SchemaError> {
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.fill(id, schema)?;
        Ok(id)
    }

    fn resolve(&mut self, target: &str) -> Result<NodeId, SchemaError> {
        if target == "#" {
            return Ok(0);
        }
        let name = target
            .strip_prefix("#/$defs/")
            .map(|name| name.replace("~1", "/").replace("~0", "~"))
            .unwrap_or_default();
        if let Some(&id) = self.named.get(&name) {
            return Ok(id);
        }
        let Some(def) = self.defs.get(&name).cloned() else {
            return Err(SchemaError::Unsupported(Box::new(Unsupported {
                keyword: "$ref".into(),
                at: target.into(),
                reason: "it names no definition".into(),
            })));
        };
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.named.insert(name, id);
        self.fill(id, &def)?;
        Ok(id)
    }

    fn fill(&mut self, id: NodeId, schema: &Value) -> Result<(), SchemaError> {
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(admits) => {
                self.nodes[id].nothing = !admits;
                return Ok(());
            }
            _ => return Ok(()),
        };
        let mut node = Node::default();
        if let Some(target) = map.get("$ref").and_then(Value::as_str) {
            node.reference = Some(self.resolve(target)?);
            self.nodes[id] = node;
            return Ok(());
        }
        node.types = Types(match map.get("type") {
            Some(Value::String(t)) => Types::of_name(t),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .fold(0, |bits, t| bits | Types::of_name(t)),
            _ => 0,
        });
        node.values = match (map.get("enum"), map.get("const")) {
            (Some(Value::Array(values)), _) => Some(values.clone()),
            (_, Some(value)) => Some(vec![value.clone()]),
            _ => None,
        };
        scalar_rules(map, &mut node)?;
        self.structure(map, &mut node)?;
        self.nodes[id] = node;
        Ok(())
    }

    /// The keywords of arrays, objects and alternatives.
    fn structure(&mut self, map: &Map<String, Value>, node: &mut Node) -> Result<(), SchemaError> {
        if let Some(Value::Array(prefix)) = map.get("prefixItems") {
            for item in prefix {
                let id = self.add(item)?;
                node.prefix_items.push(id);
            }
        }
        node.items = match map.get("items") {
            None => None,
            Some(Value::Bool(false)) => Some(None),
            Some(items) => Some(Some(self.add(items)?)),
        };
        if let Some(Value::Object(properties)) = map.get("properties") {
            for (name, property) in properties {
                let id = self.add(property)?;
                node.properties.push((name.clone(), id));
            }
            // Sorted by their bytes: looked up by search, listed in that order.
            node.properties.sort_by(|a, b| a.0.cmp(&b.0));
        }
        if let Some(Value::Array(required)) = map.get("required") {
            node.required = required
                .iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect();
        }
        node.extra = match map.get("additionalProperties") {
            None => None,
            Some(Value::Bool(false)) => Some(Extra::Nothing),
            Some(Value::Bool(true)) => Some(Extra::Any),
            Some(schema) => Some(Extra::Schema(self.add(schema)?)),
        };
        for (keyword, exclusive) in [("anyOf", false), ("oneOf", true)] {
            if let Some(Value::Array(branches)) = map.get(keyword) {
                let mut ids = Vec::with_capacity(branches.len());
                for branch in branches {
                    ids.push(self.add(branch)?);
                }
                node.alternatives = Some(Alternatives {
                    branches: ids,
                    exclusive,
                });
            }
        }
        Ok(())
    }
}

/// The string and number keywords of a node.
fn scalar_rules(map: &Map<String, Value>, node: &mut Node) -> Result<(), SchemaError> {
    let count = |key: &str| {
        map.get(key)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    let number = |key: &str| map.get(key).and_then(Value::as_number).map(Num::of_json);
    let format = map.get("format").and_then(Value::as_str);
    node.rules = Rules {
        min_len: count("minLength"),
        max_len: count("maxLength"),
        format: format.and_then(Format::from_name),
        minimum: number("minimum"),
        maximum: number("maximum"),
        exclusive_minimum: number("exclusiveMinimum"),
        exclusive_maximum: number("exclusiveMaximum"),
        multiple_of: number("multipleOf"),
        min_items: count("minItems"),
        max_items: count("maxItems"),
        unique_items: map.get("uniqueItems") == Some(&Value::Bool(true)),
        ..Rules::NONE
    };
    node.float32 = format == Some("float");
    if let Some(source) = map.get("pattern").and_then(Value::as_str) {
        let regex = Pattern::compile(source).map_err(|error| {
            SchemaError::Unsupported(Box::new(Unsupported {
                keyword: "pattern".into(),
                at: source.into(),
                reason: error.to_string(),
            }))
        })?;
        node.pattern = Some((source.to_owned(), regex));
    }
    Ok(())
}

/// Works out which nodes take `null` as a value, following `$ref`s and alternatives to a
/// fixed point (a recursive type's nodes refer to each other).
fn settle_nulls(nodes: &mut [Node]) {
    for node in nodes.iter_mut() {
        node.accepts_null = !node.nothing
            && node.alternatives.is_none()
            && node.reference.is_none()
            && match &node.values {
                Some(values) => values.contains(&Value::Null),
                None => node.types.admits(Types::NULL),
            };
    }
    let mut changed = true;
    while changed {
        changed = false;
        for at in 0..nodes.len() {
            if nodes[at].accepts_null {
                continue;
            }
            let via_ref = nodes[at].reference.is_some_and(|r| nodes[r].accepts_null);
            let via_branch = nodes[at].alternatives.as_ref().is_some_and(|alts| {
                alts.branches.iter().any(|&b| nodes[b].accepts_null)
                    && nodes[at].types.admits(Types::NULL)
            });
            if via_ref || via_branch {
                nodes[at].accepts_null = true;
                changed = true;
            }
        }
    }
}
