//! H8 across builds: a paused run sealed by a build in which serde_json's `preserve_order` is
//! off (this test's) resumes in a build in which it is on, and the other way round, keyed and
//! unkeyed.
//!
//! The other build is tests/preserve-order, a crate of its own workspace (feature
//! unification would otherwise turn `preserve_order` on here too): this test builds it with
//! the cargo that runs the test, into `<target>/preserve-order`, and runs its binary. Both
//! sides play the same scenario (tests/preserve-order/src/scenario.rs, included here).
#[path = "../../tests/preserve-order/src/scenario.rs"]
mod scenario;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use scenario::{ANSWER, ARGUMENTS, Args};
use tool_runtime::PausedRun;

/// The application's key, for the keyed half.
const KEY: &str = "a key both builds are given";

/// The crate of the other build, from this crate's directory.
fn manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/preserve-order/Cargo.toml")
}

/// Builds the other build's binary into `<target>/preserve-order`, and returns its path.
///
/// Not `--locked`: the crate's lock file pins what it holds, and when tool-runtime gains a
/// dependency cargo adds it there (a change to commit) rather than fail the test.
fn build() -> PathBuf {
    // `CARGO_TARGET_TMPDIR` is `<target>/tmp`.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("preserve-order");
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--manifest-path"])
        .arg(manifest())
        .arg("--target-dir")
        .arg(&target)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the preserve_order build failed");
    target
        .join("debug")
        .join(format!("preserve-order-h8{}", std::env::consts::EXE_SUFFIX))
}

/// Runs the other build's binary in `mode` on `file`, with `key` when there is one.
fn other_build(binary: &Path, mode: &str, file: &Path, key: Option<&str>) -> Output {
    let output = Command::new(binary)
        .arg(mode)
        .arg(file)
        .args(key)
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.starts_with("preserve_order: on\n"),
        "the other build must have preserve_order on: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// What `transfer` must run with: the model's arguments.
fn expected() -> Vec<Args> {
    vec![serde_json::from_str(ARGUMENTS).expect("the scenario's arguments are JSON")]
}

/// The position of `needle` in `text`.
fn at(text: &str, needle: &str) -> usize {
    text.find(needle)
        .unwrap_or_else(|| panic!("{needle} is not in the paused run"))
}

#[tokio::test]
async fn h8_a_paused_run_resumes_across_serde_json_preserve_order_both_ways() {
    // This build keeps maps sorted: otherwise both sides would be the same build.
    assert!(
        !scenario::preserves_order(),
        "preserve_order is on in the main workspace: the crate of the other build is the only \
         one that may turn it on"
    );
    let binary = build();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("h8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    for key in [None, Some(KEY)] {
        let label = if key.is_some() { "keyed" } else { "unkeyed" };
        let bytes = key.map(str::as_bytes);

        // Sealed here (maps sorted by key), resumed there (maps in the order read).
        let paused = scenario::pause(bytes).await.unwrap();
        let text = paused.to_json().unwrap();
        assert!(
            at(&text, "\"a\": 100") < at(&text, "\"y\": 2.5"),
            "sorted here"
        );
        let file = dir.join(format!("sealed-here-{label}.json"));
        std::fs::write(&file, &text).unwrap();
        let output = other_build(&binary, "resume", &file, key);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{label}: sealed with preserve_order off, refused with it on: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains(&format!("\nanswer: {ANSWER}\n")),
            "{stdout}"
        );
        let ran = stdout
            .split_once("\nran with: ")
            .map(|(_, ran)| ran.trim_end())
            .expect("what the tool ran with");
        let ran: Vec<Args> = serde_json::from_str(ran).unwrap();
        assert_eq!(ran, expected(), "{label}");

        // Altered, it is refused there too: the other build checks the seal.
        let altered = dir.join(format!("altered-{label}.json"));
        let changed = text.replacen("Zo\u{eb} a/b", "Zoe a/b", 1);
        assert_ne!(changed, text);
        std::fs::write(&altered, changed).unwrap();
        let output = other_build(&binary, "resume", &altered, key);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{label}: an altered run resumed"
        );
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("altered"),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );

        // Sealed there (maps in the order the model wrote them), resumed here.
        let file = dir.join(format!("sealed-there-{label}.json"));
        let output = other_build(&binary, "pause", &file, key);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            at(&text, "\"y\": 2.5") < at(&text, "\"a\": 100"),
            "in the model's order there"
        );
        let paused = PausedRun::from_json(&text).unwrap();
        let (answer, ran) = scenario::resume(paused, bytes).await.unwrap_or_else(|e| {
            panic!("{label}: sealed with preserve_order on, refused with it off: {e}")
        });
        assert_eq!(answer, ANSWER);
        assert_eq!(ran, expected(), "{label}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
