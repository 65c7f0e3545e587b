//! The translator's interface. Its dialect is tested where it is compiled with the `regex`
//! crate: `tool-core`'s `schema::pattern` and `tests/pattern_ecma.rs`.

use tool_rules::pattern::translate;

#[test]
fn translations_keep_the_ecma_meaning() {
    assert_eq!(translate(r"^\d{3}$").as_deref(), Ok(r"\A[0-9]{3}\z"));
    assert_eq!(translate(r"\w").as_deref(), Ok("[0-9A-Za-z_]"));
}

#[test]
fn errors_say_what_kind_of_problem_and_where() {
    let lookahead = translate(r"a(?=b)").expect_err("no linear-time translation");
    assert!(lookahead.unsupported);
    assert_eq!(lookahead.at, 1);
    assert!(
        lookahead
            .to_string()
            .starts_with("unsupported pattern at character 2: lookahead"),
        "{lookahead}"
    );
    let reversed = translate("a{2,1}").expect_err("not ECMA-262");
    assert!(!reversed.unsupported);
    assert!(
        reversed
            .to_string()
            .starts_with("invalid pattern at character 2: numbers out of order"),
        "{reversed}"
    );
}
