//! HAProxy for the tests that run replicas behind a load balancer (the MCP scale-out test,
//! tool-durable's load test, which includes this file by path): found on the `PATH`, in
//! `/usr/sbin`, at `$HAPROXY`, or installed with `apt-get` when the test runs as root.
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The HAProxy executable: `$HAPROXY`, else `haproxy` on the `PATH` or in `/usr/sbin`, else
/// installed with `apt-get` when this runs as root, else the test fails saying what to do.
pub fn haproxy() -> PathBuf {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match FOUND.get_or_init(find_or_install_haproxy) {
        Ok(path) => path.clone(),
        Err(message) => panic!("{message}"),
    }
}

fn find_or_install_haproxy() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("HAPROXY") {
        return Ok(PathBuf::from(path));
    }
    if let Some(path) = find_haproxy() {
        return Ok(path);
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0");
    let apt = Path::new("/usr/bin/apt-get").exists();
    let missing = "the tests that run replicas behind a load balancer use HAProxy, and `haproxy` \
                   is not on the PATH nor in /usr/sbin: install it (on Debian and Ubuntu \
                   `apt-get install haproxy`, on macOS `brew install haproxy`), or set \
                   HAPROXY to its path; run as root on a machine with apt-get, the test \
                   installs it itself";
    if !(root && apt) {
        return Err(missing.to_owned());
    }
    eprintln!("installing HAProxy with apt-get for the load-balancer tests (once)");
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends", "haproxy"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .output()
    };
    let mut output = install().map_err(|e| format!("{missing}\n(apt-get: {e})"))?;
    if !output.status.success() {
        // A fresh machine may have no package lists yet.
        let _ = Command::new("apt-get")
            .args(["update", "-qq"])
            .stdin(Stdio::null())
            .output();
        output = install().map_err(|e| format!("{missing}\n(apt-get: {e})"))?;
    }
    match find_haproxy() {
        Some(path) if output.status.success() => Ok(path),
        _ => Err(format!(
            "{missing}\n(`apt-get install haproxy` failed: {})",
            String::from_utf8_lossy(&output.stderr).trim()
        )),
    }
}

fn find_haproxy() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|dir| dir.join("haproxy"))
        .find(|candidate| candidate.is_file())
}
