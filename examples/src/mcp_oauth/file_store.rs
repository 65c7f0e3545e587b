//! [`FileStore`]: an MCP client's OAuth tokens in a file, so that the next run of a command
//! (another process) uses them instead of asking its user again.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use tool_runtime::mcp::oauth::{AuthError, CredentialStore, StoredCredentials};

/// Tokens kept in one JSON file (Z4), one file per protected server.
///
/// - The file is readable by its owner only (mode `0600` on Unix); a file that others can
///   read is refused rather than trusted, as `ssh` does with its keys.
/// - Each save writes a new file beside it and renames it into place, so that a reader in
///   another process sees the old tokens or the new ones, never half a file.
/// - No error names a token: they name the file and what failed.
///
/// Two processes refreshing at once are not coordinated: the last save wins, and the other
/// process's token stays valid until it expires (or its next request asks again).
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    /// Tokens kept at `path` (created on the first save; its directory must exist).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// Where the tokens are kept.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn failed(&self, what: &str, error: impl std::fmt::Display) -> AuthError {
        AuthError::CredentialStoreError(format!("{what} {}: {error}", self.path.display()))
    }

    fn read(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let text = match std::fs::read(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.failed("cannot read the token file", e)),
        };
        check_owner_only(&self.path).map_err(|e| self.failed("refusing the token file", e))?;
        // serde_json's messages give a line and a column, never the text they stopped at.
        let stored = serde_json::from_slice(&text)
            .map_err(|e| self.failed("cannot parse the token file", e))?;
        Ok(Some(stored))
    }

    /// Writes `text` beside the file, readable by its owner only, then renames it into place.
    fn write(&self, text: &[u8]) -> io::Result<()> {
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        let aside = self.path.with_file_name(format!(
            ".{name}.{}-{}.writing",
            std::process::id(),
            WRITES.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut file = owner_only().open(&aside)?;
            file.write_all(text)?;
            file.sync_all()?;
            std::fs::rename(&aside, &self.path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&aside);
        }
        written
    }
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let store = self.clone();
        blocking(move || store.read()).await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let store = self.clone();
        blocking(move || {
            let text = serde_json::to_vec_pretty(&credentials)
                .map_err(|e| store.failed("cannot encode the tokens for", e))?;
            (store.write(&text)).map_err(|e| store.failed("cannot write the token file", e))
        })
        .await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let store = self.clone();
        blocking(move || match std::fs::remove_file(&store.path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(store.failed("cannot remove the token file", e))
            }
            _ => Ok(()),
        })
        .await
    }
}

/// Runs file work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, AuthError> + Send + 'static,
) -> Result<T, AuthError> {
    (tokio::task::spawn_blocking(work).await)
        .map_err(|e| AuthError::CredentialStoreError(format!("the token file's task: {e}")))?
}

/// Options that create a new file readable and writable by its owner only.
fn owner_only() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// Refuses a file that users other than its owner can read or write.
fn check_owner_only(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(path)?.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "other users can open it (mode {:o}): chmod 600 it",
                    mode & 0o777
                ),
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}
