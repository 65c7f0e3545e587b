//! C2: the examples' tool surfaces are committed under `examples/surface/`; a change to the
//! maintenance tools fails here with the classified diff until the file is rewritten
//! (`UPDATE_SURFACE=1 cargo test -p tool-examples --test surface`) and committed.
#![cfg(feature = "mcp")]

use std::path::Path;

use tool_examples::surface::{MAINTENANCE_FILE, MCP_SERVER_FILE, maintenance, mcp_server};
use tool_runtime::surface::{Surface, assert_snapshot};

fn committed(file: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(file)
}

#[test]
fn c2_maintenance_surface_is_committed() {
    let surface = maintenance().expect("the maintenance tools render");
    assert_eq!(
        surface.names().collect::<Vec<_>>(),
        ["lookup-window", "restart-service"]
    );
    assert_snapshot(&surface, committed(MAINTENANCE_FILE));
}

#[test]
fn c2_mcp_server_surface_is_committed() {
    let surface = mcp_server().expect("the MCP server's tools render");
    assert_eq!(
        surface.names().collect::<Vec<_>>(),
        ["lookup-window", "restart-service"]
    );
    assert_snapshot(&surface, committed(MCP_SERVER_FILE));
}

/// The committed files are the surfaces as this build renders them, and are read back as
/// surfaces: a test that held nothing could not pass here.
#[test]
fn c2_committed_surfaces_read_back() {
    for file in [MAINTENANCE_FILE, MCP_SERVER_FILE] {
        let text = std::fs::read_to_string(committed(file)).expect("the file is committed");
        let read = Surface::from_json(&text).expect("the file holds a surface");
        assert_eq!(read.to_json(), text, "{file} is not in canonical form");
        assert!(
            read.tool("restart-service")
                .is_some_and(|entry| entry["approval"] == true)
        );
    }
}
