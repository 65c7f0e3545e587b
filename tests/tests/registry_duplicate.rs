//! N3: two `#[tool]`s with one name in one binary are a declaration error naming both
//! declaration sites. This file is its own test binary, so the duplicate breaks no other test.

use tool_runtime::{Context, DeclarationError, registered, registry};

mod billing {
    /// Looks up an invoice.
    #[tool_runtime::tool(name = "lookup")]
    pub(crate) fn lookup_invoice(_ctx: &tool_runtime::Context) -> String {
        "invoice".to_owned()
    }
}

mod shipping {
    /// Looks up a parcel.
    #[tool_runtime::tool(name = "lookup")]
    pub(crate) fn lookup_parcel(_ctx: &tool_runtime::Context) -> String {
        "parcel".to_owned()
    }
}

/// A tool whose name is unique here.
#[tool_runtime::tool]
fn unique_tool() -> &'static str {
    "unique"
}

#[test]
fn n3_duplicate_names_in_the_registry_name_both_sites() {
    let Err(DeclarationError::DuplicateName {
        name,
        first,
        second,
    }) = registry()
    else {
        panic!("a duplicated name must be a declaration error");
    };
    assert_eq!(name, "lookup");
    assert!(first.file.ends_with("registry_duplicate.rs"), "{first}");
    assert!(second.file.ends_with("registry_duplicate.rs"), "{second}");
    // The two sites are the two declarations, in source order.
    assert_ne!(first.line, second.line);
    let lines = [first.line, second.line];
    let source = include_str!("registry_duplicate.rs");
    for line in lines {
        let text = source.lines().nth(line as usize - 1).unwrap_or_default();
        assert!(
            text.contains("#[tool_runtime::tool(name = \"lookup\")]"),
            "{line}: {text}"
        );
    }
    // The message names both.
    let message = registry().map(|_| ()).unwrap_err().to_string();
    assert!(message.contains(&first.to_string()) && message.contains(&second.to_string()));
}

#[test]
fn n3_a_selection_also_refuses_a_duplicated_registry() {
    assert!(matches!(
        registered(["unique-tool"]),
        Err(DeclarationError::DuplicateName { .. })
    ));
    // The handles still work on their own: the fns stay as written.
    assert_eq!(billing::lookup_invoice(&Context::new()), "invoice");
    assert_eq!(shipping::lookup_parcel(&Context::new()), "parcel");
    assert_eq!(unique_tool(), "unique");
}
