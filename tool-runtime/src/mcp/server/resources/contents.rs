//! [`Contents`]: what reading a resource returns.

use base64::Engine as _;
use rmcp::model::ResourceContents;

/// What reading a resource returns: text or bytes (sent base64), each with an optional media
/// type (the resource's own when none is given), one or more parts.
///
/// ```
/// use tool_runtime::mcp::Contents;
///
/// let readme = Contents::text("# Maintenance").with_mime_type("text/markdown");
/// let logo = Contents::blob([0x89, b'P', b'N', b'G']).with_mime_type("image/png");
/// let both = readme.and(logo);
/// assert_eq!(both.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contents {
    parts: Vec<Part>,
}

/// One part of [`Contents`].
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part {
    mime_type: Option<String>,
    body: Body,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Body {
    Text(String),
    Blob(Vec<u8>),
}

impl Contents {
    /// Text.
    pub fn text(text: impl Into<String>) -> Self {
        Self::one(Body::Text(text.into()))
    }

    /// Bytes (sent base64-encoded).
    pub fn blob(bytes: impl Into<Vec<u8>>) -> Self {
        Self::one(Body::Blob(bytes.into()))
    }

    fn one(body: Body) -> Self {
        Self {
            parts: vec![Part {
                mime_type: None,
                body,
            }],
        }
    }

    /// Sets the media type of the last part (`text/markdown`, `image/png`, …).
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        if let Some(last) = self.parts.last_mut() {
            last.mime_type = Some(mime_type.into());
        }
        self
    }

    /// These contents followed by `more`.
    #[must_use]
    pub fn and(mut self, more: Contents) -> Self {
        self.parts.extend(more.parts);
        self
    }

    /// How many parts.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Whether there is no part (never, for contents built with this type's constructors).
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The text of each text part, in order.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match &part.body {
            Body::Text(text) => Some(text.as_str()),
            Body::Blob(_) => None,
        })
    }

    /// The MCP contents of the resource at `uri`, `mime_type` for a part that names none.
    pub(crate) fn into_mcp(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        self.parts
            .into_iter()
            .map(|part| {
                let mime_type = part.mime_type.or_else(|| mime_type.map(str::to_owned));
                let contents = match part.body {
                    Body::Text(text) => ResourceContents::text(text, uri),
                    Body::Blob(bytes) => ResourceContents::blob(
                        base64::engine::general_purpose::STANDARD.encode(bytes),
                        uri,
                    ),
                };
                match mime_type {
                    Some(mime_type) => contents.with_mime_type(mime_type),
                    None => contents,
                }
            })
            .collect()
    }
}

impl From<String> for Contents {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for Contents {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}
