//! A surface held against a committed file, for tests (C2).

use std::io;
use std::path::{Path, PathBuf};

use super::{Surface, SurfaceDiff, SurfaceError};

/// The environment variable that makes [`Snapshot::check`] write the file instead of
/// comparing: `UPDATE_SURFACE=1`.
pub const UPDATE_ENV: &str = "UPDATE_SURFACE";

/// A committed surface file, and whether to rewrite it.
///
/// ```rust,ignore
/// use tool_runtime::surface::{Snapshot, SnapshotError, Surface};
///
/// // A CI that lets compatible changes through and refuses breaking ones.
/// match Snapshot::at("surface/tools.json").check(&surface) {
///     Ok(_) => {}
///     Err(SnapshotError::Changed { diff, .. }) if !diff.is_breaking() => println!("{diff}"),
///     Err(error) => panic!("{error}"),
/// }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a snapshot does nothing until `check` or `assert` is called"]
pub struct Snapshot {
    path: PathBuf,
    update: bool,
}

/// What [`Snapshot::check`] did when it did not fail.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Checked {
    /// The file holds this surface, byte for byte.
    Unchanged,
    /// The file was written (asked to update); `diff` is what changed from the file it
    /// replaced, `None` when there was none or it was not a surface.
    Written {
        /// The changes from the file it replaced.
        diff: Option<SurfaceDiff>,
    },
}

/// Why a surface does not match its file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The surface differs from the file: `diff` lists each change, classified.
    #[error(
        "the tool surface differs from {}: {}\n{diff}\nIf the change is intended, run the test again with {UPDATE_ENV}=1 to rewrite the file, and commit it.",
        path.display(),
        if diff.is_empty() { "the same tools, written in another form" } else if diff.is_breaking() { "a BREAKING change" } else { "compatible changes only" }
    )]
    Changed {
        /// The file.
        path: PathBuf,
        /// What changed, from the file to the surface.
        diff: SurfaceDiff,
    },
    /// There is no file yet.
    #[error("there is no surface file at {}: run the test with {UPDATE_ENV}=1 to write it, and commit it", path.display())]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The file holds something other than a surface.
    #[error("{} is not a tool surface ({source}): run the test with {UPDATE_ENV}=1 to rewrite it", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Why it is not one.
        source: SurfaceError,
    },
    /// The file could not be read or written.
    #[error("{} could not be {}: {source}", path.display(), if *writing { "written" } else { "read" })]
    Io {
        /// The file.
        path: PathBuf,
        /// Whether it was being written (else read).
        writing: bool,
        /// The error.
        source: io::Error,
    },
}

impl Snapshot {
    /// The surface file at `path`; it is rewritten when `UPDATE_SURFACE=1` is set.
    pub fn at(path: impl AsRef<Path>) -> Self {
        let update = std::env::var_os(UPDATE_ENV).is_some_and(|value| value == "1");
        Self {
            path: path.as_ref().to_owned(),
            update,
        }
    }

    /// Whether to rewrite the file rather than compare with it (what `UPDATE_SURFACE=1` sets).
    pub fn update(mut self, update: bool) -> Self {
        self.update = update;
        self
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Compares `surface` with the file, or writes it there when asked to update (creating
    /// the file's directory).
    ///
    /// # Errors
    ///
    /// [`SnapshotError::Changed`] with the classified diff when they differ,
    /// [`SnapshotError::Missing`] when there is no file, [`SnapshotError::Invalid`] when it
    /// holds no surface, [`SnapshotError::Io`] when it cannot be read or written.
    pub fn check(&self, surface: &Surface) -> Result<Checked, SnapshotError> {
        let text = surface.to_json();
        let committed = match std::fs::read_to_string(&self.path) {
            Ok(committed) => Some(committed.replace("\r\n", "\n")),
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            Err(source) => return Err(self.io(false, source)),
        };
        if committed.as_deref() == Some(text.as_str()) {
            return Ok(Checked::Unchanged);
        }
        let was = committed.as_deref().map(Surface::from_json);
        if self.update {
            if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|source| self.io(true, source))?;
            }
            std::fs::write(&self.path, text).map_err(|source| self.io(true, source))?;
            let diff = was.and_then(Result::ok).map(|was| was.diff(surface));
            return Ok(Checked::Written { diff });
        }
        match was {
            None => Err(SnapshotError::Missing {
                path: self.path.clone(),
            }),
            Some(Err(source)) => Err(SnapshotError::Invalid {
                path: self.path.clone(),
                source,
            }),
            Some(Ok(was)) => Err(SnapshotError::Changed {
                path: self.path.clone(),
                diff: was.diff(surface),
            }),
        }
    }

    /// [`Snapshot::check`], panicking with its error (the classified diff) for a test.
    ///
    /// # Panics
    ///
    /// When the check fails.
    #[track_caller]
    pub fn assert(&self, surface: &Surface) {
        if let Err(error) = self.check(surface) {
            panic!("{error}");
        }
    }

    fn io(&self, writing: bool, source: io::Error) -> SnapshotError {
        SnapshotError::Io {
            path: self.path.clone(),
            writing,
            source,
        }
    }
}

/// Holds `surface` against the file at `path` in a test: rewrites the file when
/// `UPDATE_SURFACE=1` is set, and otherwise panics with the classified diff when they differ
/// ([`Snapshot::assert`]).
///
/// # Panics
///
/// When the surface differs from the file, or the file is missing or unreadable.
#[track_caller]
pub fn assert_snapshot(surface: &Surface, path: impl AsRef<Path>) {
    Snapshot::at(path).assert(surface);
}
