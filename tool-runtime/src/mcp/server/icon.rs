//! [`Icon`]: an icon a client may show beside a tool, a resource or a prompt (MCP 2025-11-25).

/// An icon a client may show beside a tool, resource or prompt: a URI (`https:` or a `data:`
/// URI), with an optional media type and sizes (`48x48`, `any`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Icon {
    src: String,
    mime_type: Option<String>,
    sizes: Vec<String>,
}

impl Icon {
    /// The icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
        }
    }

    /// Sets its media type (`image/png`, `image/svg+xml`, …).
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Adds a size it comes in (`48x48`, or `any` for a scalable one).
    #[must_use]
    pub fn with_size(mut self, size: impl Into<String>) -> Self {
        self.sizes.push(size.into());
        self
    }

    /// Its URI.
    pub fn src(&self) -> &str {
        &self.src
    }

    /// As the MCP model has it.
    pub(crate) fn to_mcp(&self) -> rmcp::model::Icon {
        let mut icon = rmcp::model::Icon::new(self.src.clone());
        icon.mime_type.clone_from(&self.mime_type);
        if !self.sizes.is_empty() {
            icon.sizes = Some(self.sizes.clone());
        }
        icon
    }
}

/// The MCP icons of `icons`, `None` when there is none.
pub(crate) fn to_mcp(icons: &[Icon]) -> Option<Vec<rmcp::model::Icon>> {
    (!icons.is_empty()).then(|| icons.iter().map(Icon::to_mcp).collect())
}
