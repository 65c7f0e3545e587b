//! M7 and C4: `#[resource]` and `#[prompt]` compile as users write them (`ui_m7/pass`), and
//! each misuse is a compile error at its token that says the fix (`ui_m7/fail`, each with
//! its reviewed `.stderr`): a resource without a URI, a URI that is not one, a template with
//! an operator or two adjacent variables, a template without its typed parameter (or a
//! parameter without variables), a name that is not an MCP name, a handler that returns no
//! `Result` or the wrong contents, a misspelt key, two typed parameters, the attribute on a
//! struct; a prompt without a description, with a bad name, the wrong messages, generics, the
//! context twice, arguments that do not derive `Schema`, a handle that is no identifier, a
//! method.
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test -p tool-runtime
//! --features mcp --test mcp_macros_ui_m7` and read the diff before committing it.
#![cfg(feature = "mcp")]

#[test]
fn m7_the_resource_and_prompt_macros() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui_m7/fail/*.rs");
    t.pass("tests/ui_m7/pass/*.rs");
}
