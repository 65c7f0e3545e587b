//! Compile tests: every diagnostic the macros emit (`ui/fail`, each with its reviewed
//! `.stderr`), and usage that must compile (`ui/pass`).
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test -p tool-tests --test ui`
//! and read the diff before committing it.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/fail/*.rs");
    t.pass("ui/pass/*.rs");
}
