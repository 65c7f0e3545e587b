//! `#[schema(items(...))]`: the constraints of each item of a list, published under the
//! list's `items` (S1) and enforced on each item at its own pointer (S2), in the order of T1.

use serde_json::json;
use tool_runtime::Schema;
use tool_tests::{parse_args, parse_decoded, paths_and_rules, schema_of};

/// A post.
#[derive(Schema, Debug, PartialEq)]
struct Post {
    /// Tags of the post.
    #[schema(max_items = 3, items(pattern = "^[a-z]+$", min_len = 1, max_len = 8))]
    tags: Vec<String>,
    /// Scores, one per reviewer.
    #[schema(items(range = 1..=10))]
    scores: Option<Vec<u8>>,
    /// Where to send copies.
    #[schema(default, items(format = "email"))]
    copies: Vec<String>,
    /// Labels from a fixed list (boxed, to show that `items(...)` reaches through a `Box`).
    #[allow(clippy::box_collection)]
    #[schema(items(one_of = ["red", "green"]))]
    colours: Option<Box<Vec<Option<String>>>>,
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(path, rule)| ((*path).to_owned(), (*rule).to_owned()))
        .collect()
}

// S1: the item constraints sit in the list's `items`, beside the list's own; an
// `Option<Vec<T>>` carries them in its array branch.
#[test]
fn s1_item_constraints_are_published_under_items() {
    let schema = schema_of::<Post>().expect("a schema");
    let properties = &schema["properties"];
    assert_eq!(
        properties["tags"],
        json!({
            "type": "array",
            "description": "Tags of the post.",
            "maxItems": 3,
            "items": {"type": "string", "pattern": "^[a-z]+$", "minLength": 1, "maxLength": 8}
        })
    );
    assert_eq!(
        properties["scores"],
        json!({
            "description": "Scores, one per reviewer.",
            "anyOf": [
                {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 10}},
                {"type": "null"}
            ]
        })
    );
    assert_eq!(
        properties["copies"]["anyOf"][0]["items"],
        json!({"type": "string", "format": "email"})
    );
    assert_eq!(
        properties["colours"]["anyOf"][0]["items"],
        json!({"type": ["string", "null"], "enum": ["red", "green"]})
    );
}

// S2: each item is checked at its own pointer (`/tags/1`, not `/tags`); the list's own rule is
// reported at the list, before what it holds (T1), whichever way the arguments are read.
#[test]
fn s2_each_item_is_checked_at_its_own_pointer() {
    let args = r#"{"tags": ["ok", "", "UPPER", "waytoolongtag"], "scores": [3, 0, 11],
        "copies": ["a@example.com", "nobody"], "colours": ["red", null, "blue"]}"#;
    for parse in [parse_args::<Post>, parse_decoded::<Post>] {
        let err = parse(args).expect_err("violations");
        assert_eq!(
            paths_and_rules(&err),
            pairs(&[
                ("/colours/2", "enum"),
                ("/copies/1", "format"),
                ("/scores/1", "minimum"),
                ("/scores/2", "maximum"),
                ("/tags", "maxItems"),
                ("/tags/1", "minLength"),
                ("/tags/1", "pattern"),
                ("/tags/2", "pattern"),
                ("/tags/3", "maxLength"),
            ])
        );
        let message = |path: &str, rule: &str| {
            err.iter()
                .find(|v| v.path == path && v.rule.keyword() == rule)
                .map(|v| v.message.clone())
                .expect("the violation")
        };
        assert_eq!(
            message("/tags/1", "minLength"),
            "must be at least 1 character long, found 0"
        );
        assert_eq!(
            message("/tags/3", "maxLength"),
            "must be at most 8 characters long, found 13"
        );
        assert_eq!(
            message("/scores/2", "maximum"),
            "must be at most 10, found 11"
        );
    }
    let ok = parse_args::<Post>(r#"{"tags": ["a", "bc"], "scores": null}"#).expect("valid");
    assert_eq!(ok.tags, ["a", "bc"]);
    assert_eq!(ok.scores, None);
}

// T1 and S4: an item past its type's range breaks the item's own bound, the one the schema
// shows (`maximum: 10`), not `u8`'s 255.
#[test]
fn t1_an_item_past_its_type_range_breaks_its_declared_bound() {
    for parse in [parse_args::<Post>, parse_decoded::<Post>] {
        let err = parse(r#"{"tags": [], "scores": [300, -1]}"#).expect_err("violations");
        assert_eq!(
            paths_and_rules(&err),
            pairs(&[("/scores/0", "maximum"), ("/scores/1", "minimum")])
        );
        assert_eq!(err[0].message, "must be at most 10, found 300");
        assert_eq!(err[1].message, "must be at least 1, found -1");
    }
}

/// A list of lists, whose items take no `items(...)`: the inner lists keep their type's bounds.
#[derive(Schema, Debug)]
#[allow(dead_code)]
struct Grid {
    #[schema(items(range = 0..=9))]
    row: Vec<u8>,
    cells: Vec<Vec<u8>>,
}

// T1: the bound of `items(...)` is the outer list's items', never a nested list's.
#[test]
fn t1_item_bounds_do_not_reach_other_lists() {
    let err = parse_args::<Grid>(r#"{"row": [10], "cells": [[256]]}"#).expect_err("violations");
    assert_eq!(
        paths_and_rules(&err),
        pairs(&[("/cells/0/0", "maximum"), ("/row/0", "maximum")])
    );
    assert_eq!(err[0].message, "must be at most 255, found 256");
    assert_eq!(err[1].message, "must be at most 9, found 10");
}
