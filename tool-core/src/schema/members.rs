//! The members of an object the model sent: declared fields found by index, fields left out
//! (their defaults, S2), undeclared keys and keys sent twice (S4), and the names of unit
//! variants.

use std::collections::HashSet;

use super::Schema;
use super::broken::Broken;
use crate::violation::{ParseCx, Rule};

/// The index of `key` among `names` (the declared fields of an object, or the names of unit
/// variants).
pub fn field_index(names: &[&str], key: &str) -> Option<usize> {
    names.iter().position(|name| *name == key)
}

/// The keys of one object being read: it tells declared fields by index, records a violation
/// for each key the schema does not declare (and skips its value), and rejects a key sent
/// twice.
#[derive(Debug)]
pub struct Keys<'k> {
    pub(super) names: &'k [&'k str],
    pub(super) allowed: &'k [&'k str],
    seen: Seen,
    /// Whether no key has been read yet (by [`Keys::next_read`]).
    pub(super) first: bool,
    /// The index after the last declared field read: the one a model sending the fields in
    /// their order sends next, compared first.
    pub(super) next: usize,
    /// The undeclared keys read so far, hashed so that a duplicate among thousands of them is
    /// found in constant time: the parse stays linear in the input.
    pub(super) unknown: HashSet<String>,
}

/// Which declared fields have been read.
#[derive(Debug)]
enum Seen {
    Few(u128),
    Many(Vec<bool>),
}

impl<'k> Keys<'k> {
    /// Keys of an object whose fields are `names` (distinct, as a derive checks); `allowed` is
    /// what a violation lists as the object's properties (the fields, and a tagged enum's tag).
    pub fn new(names: &'k [&'k str], allowed: &'k [&'k str]) -> Self {
        let seen = if names.len() <= 128 {
            Seen::Few(0)
        } else {
            Seen::Many(vec![false; names.len()])
        };
        Self {
            names,
            allowed,
            seen,
            first: true,
            next: 0,
            unknown: HashSet::new(),
        }
    }

    /// Marks a field as read; returns whether it had been read already.
    pub(super) fn mark(&mut self, index: usize) -> bool {
        match &mut self.seen {
            Seen::Few(bits) => {
                let bit = 1u128 << index;
                let before = *bits & bit != 0;
                *bits |= bit;
                before
            }
            Seen::Many(flags) => std::mem::replace(&mut flags[index], true),
        }
    }
}

/// The value of a field the model left out or sent as `null` (S2): its default, the type's
/// absent value (`None` for `Option`), or a `required` violation.
pub fn absent_field<T: Schema>(key: &str, cx: &mut ParseCx) -> Option<T> {
    let v = T::absent();
    if v.is_none() {
        cx.broke_at(key, Broken::Required);
    }
    v
}

/// Records a violation for each member of `members` (an object the model sent) that the
/// schema does not declare.
pub fn unknown_field(key: &str, allowed: &[&str], cx: &mut ParseCx) {
    let short = crate::preview::preview_str(key);
    cx.enter_key(&short);
    cx.violate_with(Rule::AdditionalProperties, || {
        if allowed.is_empty() {
            "is not a property of this object, which takes none".to_owned()
        } else {
            format!(
                "is not a property of this object; its properties are {}",
                super::quoted_list(allowed)
            )
        }
    });
    cx.leave();
}

/// Records that `name` is none of the unit variants `names`.
pub fn unknown_variant(name: &str, names: &[&str], cx: &mut ParseCx) {
    cx.violate(Rule::Enum, crate::violation::not_one_of(names, name));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_reject_a_field_sent_twice_and_report_others() {
        let names = ["a", "b"];
        let mut keys = Keys::new(&names, &names);
        assert!(!keys.mark(1));
        assert!(keys.mark(1));
        let many: Vec<String> = (0..200).map(|i| format!("k{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let mut keys = Keys::new(&many, &many);
        assert!(!keys.mark(150));
        assert!(keys.mark(150));
    }
}
