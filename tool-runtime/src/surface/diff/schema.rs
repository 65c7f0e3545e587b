//! The changes of one JSON Schema, keyword by keyword, each read for the part it is in (an
//! input schema or an output schema, [`Part`]).

use serde_json::Value;

use super::{Changes, below, keys};
use crate::surface::classify::{self, ChangeKind, Part};

impl Changes {
    /// The changes from the schema `was` to the schema `is`, at the pointer `at`.
    pub(super) fn schema(
        &mut self,
        part: &Part,
        at: &str,
        was: Option<&Value>,
        is: Option<&Value>,
    ) {
        if was == is {
            return;
        }
        let (Some(Value::Object(_)), Some(Value::Object(_))) = (was, is) else {
            self.push(
                part.clone(),
                at.to_owned(),
                was,
                is,
                ChangeKind::TypeChanged,
            );
            return;
        };
        for keyword in keys(was, is) {
            let old = was.and_then(|v| v.get(keyword));
            let new = is.and_then(|v| v.get(keyword));
            if old != new {
                self.keyword(part, &below(at, keyword), keyword, old, new);
            }
        }
    }

    /// The change of one keyword of a schema.
    fn keyword(
        &mut self,
        part: &Part,
        at: &str,
        keyword: &str,
        was: Option<&Value>,
        is: Option<&Value>,
    ) {
        let push =
            |changes: &mut Self, kind| changes.push(part.clone(), at.to_owned(), was, is, kind);
        match keyword {
            "properties" => self.members(
                part,
                at,
                was,
                is,
                ChangeKind::FieldAdded,
                ChangeKind::FieldRemoved,
            ),
            "$defs" | "definitions" => {
                self.members(
                    part,
                    at,
                    was,
                    is,
                    ChangeKind::Definitions,
                    ChangeKind::Definitions,
                );
            }
            "required" => self.set(
                part,
                at,
                was,
                is,
                ChangeKind::FieldNewlyRequired,
                ChangeKind::FieldNoLongerRequired,
            ),
            "enum" => self.set(
                part,
                at,
                was,
                is,
                ChangeKind::EnumValueAdded,
                ChangeKind::EnumValueRemoved,
            ),
            "type" => push(self, classify::retyped(was, is)),
            "additionalProperties" => self.additional(part, at, was, is),
            "items" | "contains" | "additionalItems" => match (was, is) {
                (Some(Value::Object(_)), Some(Value::Object(_))) => self.schema(part, at, was, is),
                (None, Some(_)) => push(
                    self,
                    ChangeKind::BoundNarrowed {
                        keyword: keyword.to_owned(),
                    },
                ),
                (Some(_), None) => push(
                    self,
                    ChangeKind::BoundWidened {
                        keyword: keyword.to_owned(),
                    },
                ),
                _ => push(self, ChangeKind::Other),
            },
            "anyOf" | "oneOf" => self.alternatives(
                part,
                at,
                was,
                is,
                ChangeKind::AlternativeAdded,
                ChangeKind::AlternativeRemoved,
            ),
            "allOf" => {
                let kw = || keyword.to_owned();
                self.alternatives(
                    part,
                    at,
                    was,
                    is,
                    ChangeKind::BoundNarrowed { keyword: kw() },
                    ChangeKind::BoundWidened { keyword: kw() },
                );
            }
            "$ref" => push(self, ChangeKind::TypeChanged),
            "default" => push(self, ChangeKind::DefaultChanged),
            _ if classify::documents(keyword) => push(self, ChangeKind::Documentation),
            _ => push(
                self,
                classify::bound(keyword, was, is).unwrap_or(ChangeKind::Other),
            ),
        }
    }

    /// Named subschemas (`properties`, `$defs`): each compared as a schema, and each added
    /// or removed one a change of its own.
    fn members(
        &mut self,
        part: &Part,
        at: &str,
        was: Option<&Value>,
        is: Option<&Value>,
        added: ChangeKind,
        removed: ChangeKind,
    ) {
        for name in keys(was, is) {
            let old = was.and_then(|v| v.get(name));
            let new = is.and_then(|v| v.get(name));
            let here = below(at, name);
            match (old, new) {
                (Some(_), Some(_)) => self.schema(part, &here, old, new),
                (None, Some(_)) => self.push(part.clone(), here, old, new, added.clone()),
                (Some(_), None) => self.push(part.clone(), here, old, new, removed.clone()),
                (None, None) => {}
            }
        }
    }

    /// An array read as a set (`required`, `enum`): each value added or removed a change of its
    /// own, the value alone in [`super::Change::is`] or [`super::Change::was`].
    fn set(
        &mut self,
        part: &Part,
        at: &str,
        was: Option<&Value>,
        is: Option<&Value>,
        added: ChangeKind,
        removed: ChangeKind,
    ) {
        let (old, new) = (elements(was), elements(is));
        // An `enum` appearing or vanishing takes fewer or more values as a whole.
        if at.ends_with("/enum") && (was.is_none() || is.is_none()) {
            let keyword = "enum".to_owned();
            let kind = if is.is_some() {
                ChangeKind::BoundNarrowed { keyword }
            } else {
                ChangeKind::BoundWidened { keyword }
            };
            self.push(part.clone(), at.to_owned(), was, is, kind);
            return;
        }
        for value in new.iter().filter(|value| !old.contains(value)) {
            self.push(
                part.clone(),
                at.to_owned(),
                None,
                Some(value),
                added.clone(),
            );
        }
        for value in old.iter().filter(|value| !new.contains(value)) {
            self.push(
                part.clone(),
                at.to_owned(),
                Some(value),
                None,
                removed.clone(),
            );
        }
    }

    /// `additionalProperties`: closed (newly `false`), opened (no longer `false`), or its
    /// schema compared.
    fn additional(&mut self, part: &Part, at: &str, was: Option<&Value>, is: Option<&Value>) {
        let closed = |value: Option<&Value>| value == Some(&Value::Bool(false));
        let kind = match (closed(was), closed(is)) {
            (false, true) => ChangeKind::AdditionalPropertiesClosed,
            (true, false) => ChangeKind::AdditionalPropertiesOpened,
            _ => match (was, is) {
                (Some(Value::Object(_)), Some(Value::Object(_))) => {
                    return self.schema(part, at, was, is);
                }
                // Any value, to values of one schema (or back).
                (None | Some(Value::Bool(true)), Some(_)) => ChangeKind::BoundNarrowed {
                    keyword: "additionalProperties".to_owned(),
                },
                _ => ChangeKind::BoundWidened {
                    keyword: "additionalProperties".to_owned(),
                },
            },
        };
        self.push(part.clone(), at.to_owned(), was, is, kind);
    }

    /// A list of subschemas (`anyOf`, `oneOf`, `allOf`): those at the same index compared,
    /// and each one added or removed at the end a change of its own.
    fn alternatives(
        &mut self,
        part: &Part,
        at: &str,
        was: Option<&Value>,
        is: Option<&Value>,
        added: ChangeKind,
        removed: ChangeKind,
    ) {
        let (old, new) = (elements(was), elements(is));
        for index in 0..old.len().max(new.len()) {
            let here = below(at, &index.to_string());
            match (old.get(index), new.get(index)) {
                (Some(o), Some(n)) => self.schema(part, &here, Some(o), Some(n)),
                (None, Some(n)) => self.push(part.clone(), here, None, Some(n), added.clone()),
                (Some(o), None) => self.push(part.clone(), here, Some(o), None, removed.clone()),
                (None, None) => {}
            }
        }
    }
}

/// The elements of an array value; none for anything else.
fn elements(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}
