//! Checking a call's arguments against the nodes of a schemars input (C3), with the
//! violations a derived type gives (S2–S4): the same rules, pointers and words.
//!
//! The walk is linear in the arguments for a given schema: each value is checked against each
//! node at most once when alternatives cannot be told apart by type or tag (the verdicts are
//! remembered), and nesting is bounded (the decoder's 128 levels, and [`MAX_DEPTH`] frames of
//! `$ref`s and alternatives).

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::compile::{Alternatives, Extra, Node, NodeId, Types, is_integral};
use crate::__private::{bad_tag, unknown_field};
use crate::json::Json;
use crate::schema::{Broken, Listed, Num, Quoted, Sent, check_number, check_string};
use crate::violation::{ParseCx, Rule};

/// The most nested frames of one check: a value level, a `$ref` or an alternative each.
pub const MAX_DEPTH: usize = 512;

/// Why a check could not finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// The schema's `$ref`s and alternatives nest deeper than [`MAX_DEPTH`] frames without
    /// reaching a value (a type made only of itself).
    #[error("the input schema nests deeper than {limit} levels")]
    TooDeep {
        /// The bound.
        limit: usize,
    },
}

/// One check of one value: the nodes, and the verdicts of alternatives tried so far.
pub(super) struct Checker<'n> {
    nodes: &'n [Node],
    /// Whether a value (by address) fits a node: a value is tried against a node once.
    memo: HashMap<(usize, NodeId), bool>,
    depth: usize,
}

/// What the tag of a tagged enum's object says.
enum Tagged {
    /// The variant it names.
    Branch(NodeId),
    /// It is missing or names none: reported.
    Reported,
}

impl<'n> Checker<'n> {
    pub(super) fn new(nodes: &'n [Node]) -> Self {
        Self {
            nodes,
            memo: HashMap::new(),
            depth: 0,
        }
    }

    /// The node `id` stands for, `$ref`s followed.
    fn target(&self, mut id: NodeId) -> &'n Node {
        let nodes = self.nodes;
        for _ in 0..nodes.len() {
            match nodes[id].reference {
                Some(next) => id = next,
                None => break,
            }
        }
        &nodes[id]
    }

    /// Records in `cx` every way `value` breaks node `id`. A `trial` stops at the first.
    pub(super) fn check(&mut self, id: NodeId, value: &Json, cx: &mut ParseCx, trial: bool) {
        if self.depth >= MAX_DEPTH {
            cx.fail(Box::new(CheckError::TooDeep { limit: MAX_DEPTH }));
            return;
        }
        self.depth += 1;
        self.node(id, value, cx, trial);
        self.depth -= 1;
    }

    fn node(&mut self, id: NodeId, value: &Json, cx: &mut ParseCx, trial: bool) {
        let nodes = self.nodes;
        let node = &nodes[id];
        if let Some(next) = node.reference {
            return self.check(next, value, cx, trial);
        }
        if node.nothing {
            cx.broke(Broken::NotAllowed);
            return;
        }
        if !node.types.admits(types_of(value)) {
            wrong_type(node.types, value, cx);
            return;
        }
        if let Some(values) = &node.values
            && !values.iter().any(|v| same(value, v))
        {
            not_one_of(values, value, cx);
            return;
        }
        match value {
            Json::String(s) => {
                check_string(s, &node.rules, cx);
                if let Some((source, regex)) = &node.pattern
                    && !regex.is_match(s)
                {
                    cx.broke(Broken::Pattern {
                        pattern: source,
                        found: &Quoted(s),
                    });
                }
            }
            Json::Number(n) => self.number(node, n, cx),
            Json::Array(items) => self.array(node, items, cx, trial),
            Json::Object(members) => self.object(node, members, cx, trial),
            Json::Null | Json::Bool(_) => {}
        }
        if let Some(alternatives) = &node.alternatives
            && (!trial || cx.is_clean())
        {
            self.alternatives(alternatives, value, cx, trial);
        }
    }

    fn number(&self, node: &Node, n: &Number, cx: &mut ParseCx) {
        let num = Num::of_json(n);
        check_number(&num, &node.rules, cx);
        #[allow(clippy::cast_possible_truncation)]
        if node.float32 && n.as_f64().is_some_and(|f| !(f as f32).is_finite()) {
            cx.violate(
                Rule::Type,
                format!("expected a finite number that fits f32, found {num}"),
            );
        }
    }

    fn array(&mut self, node: &Node, items: &[Json], cx: &mut ParseCx, trial: bool) {
        let len = items.len();
        if let Some(min) = node.rules.min_items.filter(|&m| len < m) {
            cx.broke(Broken::MinItems { min, len });
        }
        if let Some(max) = node.rules.max_items.filter(|&m| len > m) {
            cx.broke(Broken::MaxItems { max, len });
        }
        if node.rules.unique_items
            && crate::schema::exact::has_duplicate_items(
                items.iter().map(|i| i.clone().into_value()),
            )
        {
            cx.broke(Broken::UniqueItems);
        }
        for (at, item) in items.iter().enumerate() {
            if trial && !cx.is_clean() {
                return;
            }
            let Some(id) = item_node(node, at) else {
                continue;
            };
            cx.enter_index(at);
            self.check(id, item, cx, trial);
            cx.leave();
        }
    }

    fn object(&mut self, node: &Node, members: &[(String, Json)], cx: &mut ParseCx, trial: bool) {
        let mut names: Option<Vec<&str>> = None;
        for (key, value) in members {
            if trial && !cx.is_clean() {
                return;
            }
            match member_node(node, key) {
                Some(id) if value.is_null() && !self.target(id).accepts_null => {}
                Some(id) => {
                    cx.enter_key(key);
                    self.check(id, value, cx, trial);
                    cx.leave();
                }
                None => match node.extra {
                    Some(Extra::Nothing) => {
                        let names = names.get_or_insert_with(|| {
                            node.properties.iter().map(|(n, _)| n.as_str()).collect()
                        });
                        unknown_field(key, names, cx);
                    }
                    Some(Extra::Schema(id)) => {
                        cx.enter_key(key);
                        self.check(id, value, cx, trial);
                        cx.leave();
                    }
                    Some(Extra::Any) | None => {}
                },
            }
        }
        for name in &node.required {
            let given = members
                .iter()
                .find(|(key, _)| key == name)
                .is_some_and(|(_, v)| {
                    !v.is_null()
                        || member_node(node, name).is_none_or(|id| self.target(id).accepts_null)
                });
            if !given {
                cx.broke_at(name, Broken::Required);
            }
        }
    }

    fn alternatives(
        &mut self,
        alternatives: &Alternatives,
        value: &Json,
        cx: &mut ParseCx,
        trial: bool,
    ) {
        let candidates = self.candidates(alternatives, value);
        match candidates.as_slice() {
            [] => {
                let union = alternatives
                    .branches
                    .iter()
                    .fold(0, |bits, &b| bits | self.target(b).types.bits());
                wrong_type(Types::from_bits(union), value, cx);
                return;
            }
            [only] => return self.check(*only, value, cx, trial),
            _ => {}
        }
        if let Json::Object(members) = value
            && let Some(tagged) = self.by_tag(&candidates, members, cx)
        {
            if let Tagged::Branch(id) = tagged {
                self.check(id, value, cx, trial);
            }
            return;
        }
        let fitting = candidates
            .iter()
            .filter(|&&id| self.fits(id, value))
            .count();
        match fitting {
            0 => self.check(candidates[0], value, cx, trial),
            1 => {}
            _ if alternatives.exclusive => cx.broke(Broken::SeveralAlternatives),
            _ => {}
        }
    }

    /// The branches whose type the value has.
    fn candidates(&self, alternatives: &Alternatives, value: &Json) -> Vec<NodeId> {
        let found = types_of(value);
        alternatives
            .branches
            .iter()
            .copied()
            .filter(|&b| {
                let node = self.target(b);
                !node.nothing && node.types.admits(found)
            })
            .collect()
    }

    /// Whether `value` fits node `id`, tried once per value and node.
    fn fits(&mut self, id: NodeId, value: &Json) -> bool {
        let key = (std::ptr::from_ref(value) as usize, id);
        if let Some(&known) = self.memo.get(&key) {
            return known;
        }
        let mut scratch = ParseCx::new();
        self.check(id, value, &mut scratch, true);
        let fit = scratch.is_clean();
        self.memo.insert(key, fit);
        fit
    }

    /// The variant a tagged enum's object names: by a property every candidate requires with
    /// one string value each (`#[serde(tag = "…")]`), or by the one property each candidate
    /// has (serde's default, external tagging).
    fn by_tag(
        &self,
        candidates: &[NodeId],
        members: &[(String, Json)],
        cx: &mut ParseCx,
    ) -> Option<Tagged> {
        let first = self.target(candidates[0]);
        for (name, _) in &first.properties {
            let tags: Option<Vec<(&str, NodeId)>> = candidates
                .iter()
                .map(|&c| {
                    let node = self.target(c);
                    node.required
                        .contains(name)
                        .then(|| member_node(node, name))
                        .flatten()
                        .and_then(|p| self.constant(p))
                        .map(|tag| (tag, c))
                })
                .collect();
            let Some(tags) = tags else { continue };
            let found = members.iter().find(|(k, _)| k == name).map(|(_, v)| v);
            if let Some(Json::String(s)) = found
                && let Some(&(_, id)) = tags.iter().find(|(tag, _)| tag == s)
            {
                return Some(Tagged::Branch(id));
            }
            let names: Vec<&str> = tags.iter().map(|(tag, _)| *tag).collect();
            bad_tag(name, found, &names, cx);
            return Some(Tagged::Reported);
        }
        // External tagging: each candidate one required property, the value one member.
        let external = members.len() == 1
            && candidates.iter().all(|&c| {
                let node = self.target(c);
                node.properties.len() == 1 && node.required == [node.properties[0].0.clone()]
            });
        if !external {
            return None;
        }
        candidates
            .iter()
            .copied()
            .find(|&c| self.target(c).properties[0].0 == members[0].0)
            .map(Tagged::Branch)
    }

    /// The one string a node admits (`const`, or an `enum` of one).
    fn constant(&self, id: NodeId) -> Option<&'n str> {
        match self.target(id).values.as_deref() {
            Some([Value::String(s)]) => Some(s),
            _ => None,
        }
    }

    /// The value `value` (which passed [`check`](Self::check)) as serde reads it: a member
    /// sent as `null` that its property does not take is left out (absent, S2), and an
    /// integer written as `3.0` is `3`.
    pub(super) fn value_of(&mut self, id: NodeId, value: &Json) -> Value {
        if self.depth >= MAX_DEPTH {
            return value.clone().into_value();
        }
        self.depth += 1;
        let out = self.value_at(id, value);
        self.depth -= 1;
        out
    }

    fn value_at(&mut self, id: NodeId, value: &Json) -> Value {
        let node = self.target(id);
        if let Some(alternatives) = &node.alternatives {
            let candidates = self.candidates(alternatives, value);
            let branch = match candidates.as_slice() {
                [only] => Some(*only),
                _ => candidates.iter().copied().find(|&c| self.fits(c, value)),
            };
            if let Some(branch) = branch {
                return self.value_of(branch, value);
            }
        }
        match value {
            Json::Number(n) if integer_only(node.types) => Value::Number(integer(n)),
            Json::Array(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(at, item)| match item_node(node, at) {
                        Some(id) => self.value_of(id, item),
                        None => item.clone().into_value(),
                    })
                    .collect(),
            ),
            Json::Object(members) => {
                let mut out = Map::new();
                for (key, member) in members {
                    let id = member_node(node, key).or(match node.extra {
                        Some(Extra::Schema(id)) => Some(id),
                        _ => None,
                    });
                    let value = match id {
                        Some(id) if member.is_null() && !self.target(id).accepts_null => continue,
                        Some(id) => self.value_of(id, member),
                        None => member.clone().into_value(),
                    };
                    out.insert(key.clone(), value);
                }
                Value::Object(out)
            }
            other => other.clone().into_value(),
        }
    }
}

/// The node of an array's item at `at`: its `prefixItems` entry, else `items`.
fn item_node(node: &Node, at: usize) -> Option<NodeId> {
    node.prefix_items.get(at).copied().or(node.items.flatten())
}

/// The node of a declared property.
fn member_node(node: &Node, key: &str) -> Option<NodeId> {
    node.properties
        .binary_search_by(|(name, _)| name.as_str().cmp(key))
        .ok()
        .map(|at| node.properties[at].1)
}

fn types_of(value: &Json) -> u8 {
    match value {
        Json::Null => Types::NULL,
        Json::Bool(_) => 1 << 1,
        Json::Number(n) if is_integral(n) => Types::INTEGER | Types::NUMBER,
        Json::Number(_) => Types::NUMBER,
        Json::String(_) => Types::STRING,
        Json::Array(_) => Types::ARRAY,
        Json::Object(_) => Types::OBJECT,
    }
}

fn integer_only(types: Types) -> bool {
    types.bits() & Types::INTEGER != 0 && types.bits() & Types::NUMBER == 0
}

/// An integral number written as an integer (`3.0` as `3`), for serde's integer types.
fn integer(n: &Number) -> Number {
    if n.is_i64() || n.is_u64() {
        return n.clone();
    }
    let f = n.as_f64().unwrap_or(0.0);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    if (-9.2e18..9.2e18).contains(&f) {
        Number::from(f as i64)
    } else if (0.0..1.8e19).contains(&f) {
        Number::from(f as u64)
    } else {
        n.clone()
    }
}

/// Records a `type` violation as the parser words it.
fn wrong_type(types: Types, value: &Json, cx: &mut ParseCx) {
    let wanted = types.expected();
    match value {
        Json::Number(n) if integer_only(types) => cx.broke(Broken::Type {
            expected: &wanted,
            found: &Num::of_json(n),
        }),
        other => cx.type_mismatch(&wanted, other.type_name()),
    }
}

/// Records an `enum` violation: for strings as the parser words one, else with the values.
fn not_one_of(values: &[Value], value: &Json, cx: &mut ParseCx) {
    let strings: Option<Vec<&str>> = values.iter().map(Value::as_str).collect();
    match (strings, value) {
        (Some(allowed), Json::String(found)) => {
            cx.violate(Rule::Enum, crate::violation::not_one_of(&allowed, found));
        }
        _ => cx.broke(Broken::OneOf {
            listed: &Listed(values),
            found: &Sent::of_json(value),
        }),
    }
}

/// Whether a value equals a schema's value, numbers by their value (`1` is `1.0`).
fn same(value: &Json, expected: &Value) -> bool {
    match (value, expected) {
        (Json::Null, Value::Null) => true,
        (Json::Bool(a), Value::Bool(b)) => a == b,
        (Json::Number(a), Value::Number(b)) => {
            Num::of_json(a).cmp(Num::of_json(b)) == Some(std::cmp::Ordering::Equal)
        }
        (Json::String(a), Value::String(b)) => a == b,
        (Json::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Json::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, v)| b.get(k).is_some_and(|expected| same(v, expected)))
        }
        _ => false,
    }
}
