//! A remote server's resources and prompts (M7), read through an [`McpToolset`]'s session:
//! listed (bounded pages), read, got, subscribed to. What the server sends is untrusted: lists
//! are bounded, contents decoded strictly, a server's error kept as its code and message.

use base64::Engine as _;
use rmcp::ServiceError;
use rmcp::model::{
    ContentBlock, GetPromptRequestParams, PaginatedRequestParams, PromptMessage,
    ReadResourceRequestParams, ResourceContents, Role, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use serde_json::{Map, Value};
use tool_core::{Image, Resource};

use super::McpToolset;
use crate::mcp::server::{Contents, Message};

/// The most pages of a list followed, and the most items accepted from one list.
const MAX_PAGES: usize = 64;
const MAX_ITEMS: usize = 4096;

/// Why a request about a remote server's resources or prompts failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteCatalogError {
    /// The connection failed: the server exited, the HTTP request failed, the session is
    /// closed.
    #[error("the MCP server could not be asked: {0}")]
    Transport(#[source] tool_core::BoxError),
    /// The server answered with a JSON-RPC error (a resource not found is `-32602`).
    #[error("the MCP server answered with error {code}: {message}")]
    Protocol {
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message.
        message: String,
    },
    /// The server's answer is not one this client takes: a list past the bounds, content
    /// that does not decode, a question asked in the answer.
    #[error("the MCP server's answer is refused: {0}")]
    Refused(String),
}

impl From<ServiceError> for RemoteCatalogError {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::McpError(error) => Self::Protocol {
                code: error.code.0,
                message: error.message.into_owned(),
            },
            other => Self::Transport(Box::new(other)),
        }
    }
}

/// A resource (or resource template) a remote server lists.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteResource {
    /// Its URI, or URI template.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its description, when it has one.
    pub description: Option<String>,
    /// Its media type, when the server says.
    pub mime_type: Option<String>,
}

/// A prompt a remote server lists.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemotePrompt {
    /// Its name.
    pub name: String,
    /// Its description, when it has one.
    pub description: Option<String>,
    /// Its arguments: name, and whether it is required.
    pub arguments: Vec<(String, bool)>,
}

/// Follows a paginated list: at most [`MAX_PAGES`] pages and [`MAX_ITEMS`] items.
macro_rules! all_pages {
    ($peer:expr, $method:ident, $field:ident, $what:literal) => {{
        let mut items = Vec::new();
        let mut cursor = None;
        let mut done = false;
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let page = $peer.$method(Some(params)).await?;
            items.extend(page.$field);
            if items.len() > MAX_ITEMS {
                return Err(RemoteCatalogError::Refused(format!(
                    "the server lists more than {MAX_ITEMS} {}",
                    $what
                )));
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => {
                    done = true;
                    break;
                }
            }
        }
        if !done {
            return Err(RemoteCatalogError::Refused(format!(
                "the server's list of {} has more than {MAX_PAGES} pages",
                $what
            )));
        }
        items
    }};
}

impl McpToolset {
    /// The resources the server lists (`resources/list`), in its order.
    ///
    /// # Errors
    ///
    /// A [`RemoteCatalogError`]: the transport failed, the server refused, or its list is
    /// past the bounds (64 pages, 4096 items).
    pub async fn list_resources(&self) -> Result<Vec<RemoteResource>, RemoteCatalogError> {
        let peer = &self.connection.peer;
        let listed = all_pages!(peer, list_resources, resources, "resources");
        Ok((listed.into_iter())
            .map(|r| RemoteResource {
                uri: r.uri,
                name: r.name,
                description: r.description,
                mime_type: r.mime_type,
            })
            .collect())
    }

    /// The resource templates the server lists (`resources/templates/list`).
    ///
    /// # Errors
    ///
    /// As [`McpToolset::list_resources`].
    pub async fn list_resource_templates(&self) -> Result<Vec<RemoteResource>, RemoteCatalogError> {
        let peer = &self.connection.peer;
        let listed = all_pages!(
            peer,
            list_resource_templates,
            resource_templates,
            "resource templates"
        );
        Ok((listed.into_iter())
            .map(|t| RemoteResource {
                uri: t.uri_template,
                name: t.name,
                description: t.description,
                mime_type: t.mime_type,
            })
            .collect())
    }

    /// Reads the resource at `uri` (`resources/read`). Its text parts can be an agent's
    /// context ([`Contents::texts`]).
    ///
    /// # Errors
    ///
    /// A [`RemoteCatalogError`]: not found is [`RemoteCatalogError::Protocol`] with code
    /// `-32602`; contents whose base64 does not decode, or none at all, are refused.
    pub async fn read_resource(&self, uri: &str) -> Result<Contents, RemoteCatalogError> {
        let params = ReadResourceRequestParams::new(uri);
        let read = self.connection.peer.read_resource(params).await?;
        let mut parts = read.contents.into_iter().map(contents_of);
        let first = parts
            .next()
            .ok_or_else(|| RemoteCatalogError::Refused("the resource has no contents".into()))??;
        parts.try_fold(first, |all, part| Ok(all.and(part?)))
    }

    /// The prompts the server lists (`prompts/list`).
    ///
    /// # Errors
    ///
    /// As [`McpToolset::list_resources`].
    pub async fn list_prompts(&self) -> Result<Vec<RemotePrompt>, RemoteCatalogError> {
        let peer = &self.connection.peer;
        let listed = all_pages!(peer, list_prompts, prompts, "prompts");
        Ok((listed.into_iter())
            .map(|p| RemotePrompt {
                name: p.name,
                description: p.description,
                arguments: (p.arguments.unwrap_or_default().into_iter())
                    .map(|a| (a.name, a.required.unwrap_or(false)))
                    .collect(),
            })
            .collect())
    }

    /// Gets the prompt `name` with `arguments` (`prompts/get`): its messages.
    ///
    /// # Errors
    ///
    /// A [`RemoteCatalogError`]: an unknown prompt or bad arguments are
    /// [`RemoteCatalogError::Protocol`] (`-32602`); content this client cannot read (audio,
    /// a blob that does not decode) is refused.
    pub async fn get_prompt<K, V>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Vec<Message>, RemoteCatalogError>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let arguments: Map<String, Value> = (arguments.into_iter())
            .map(|(k, v)| (k.into(), Value::String(v.into())))
            .collect();
        let params = GetPromptRequestParams::new(name).with_arguments(arguments);
        let got = self.connection.peer.get_prompt(params).await?;
        got.messages.into_iter().map(message_of).collect()
    }

    /// Subscribes to the resource at `uri` (`resources/subscribe`, before protocol
    /// 2026-07-28): the server then sends `notifications/resources/updated` when it changes.
    ///
    /// # Errors
    ///
    /// A [`RemoteCatalogError`]: the server refused (an unknown URI is `-32602`).
    #[allow(deprecated)]
    pub async fn subscribe(&self, uri: &str) -> Result<(), RemoteCatalogError> {
        let params = SubscribeRequestParams::new(uri);
        Ok(self.connection.peer.subscribe(params).await?)
    }

    /// Unsubscribes from the resource at `uri` (`resources/unsubscribe`).
    ///
    /// # Errors
    ///
    /// A [`RemoteCatalogError`]: the server refused.
    #[allow(deprecated)]
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), RemoteCatalogError> {
        let params = UnsubscribeRequestParams::new(uri);
        Ok(self.connection.peer.unsubscribe(params).await?)
    }
}

/// One part of a read resource.
fn contents_of(part: ResourceContents) -> Result<Contents, RemoteCatalogError> {
    match part {
        ResourceContents::TextResourceContents {
            text, mime_type, ..
        } => Ok(with_mime(Contents::text(text), mime_type)),
        ResourceContents::BlobResourceContents {
            blob, mime_type, ..
        } => Ok(with_mime(Contents::blob(decode(&blob)?), mime_type)),
        _ => Err(RemoteCatalogError::Refused(
            "a resource's contents are neither text nor a blob".into(),
        )),
    }
}

fn with_mime(contents: Contents, mime_type: Option<String>) -> Contents {
    match mime_type {
        Some(mime_type) => contents.with_mime_type(mime_type),
        None => contents,
    }
}

fn decode(blob: &str) -> Result<Vec<u8>, RemoteCatalogError> {
    base64::engine::general_purpose::STANDARD
        .decode(blob)
        .map_err(|_| RemoteCatalogError::Refused("a blob is not base64".into()))
}

/// One message of a prompt the server sent.
fn message_of(message: PromptMessage) -> Result<Message, RemoteCatalogError> {
    let assistant = message.role == Role::Assistant;
    let refused =
        |what: &str| RemoteCatalogError::Refused(format!("a prompt message holds {what}"));
    match message.content {
        ContentBlock::Text(text) if assistant => Ok(Message::assistant(text.text)),
        ContentBlock::Text(text) => Ok(Message::user(text.text)),
        ContentBlock::Image(image) if !assistant => Ok(Message::user_image(Image::new(
            image.mime_type,
            decode(&image.data)?,
        ))),
        ContentBlock::Resource(embedded) if !assistant => {
            Ok(Message::user_resource(resource_of(embedded.resource)?))
        }
        _ => Err(refused(
            "content this client does not take (audio, a link, or media from the assistant)",
        )),
    }
}

/// An embedded resource as a [`Resource`].
fn resource_of(contents: ResourceContents) -> Result<Resource, RemoteCatalogError> {
    match contents {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            ..
        } => Ok(Resource::text(
            uri,
            mime_type.unwrap_or_else(|| "text/plain".to_owned()),
            text,
        )),
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => Ok(Resource::blob(
            uri,
            mime_type.unwrap_or_else(|| "application/octet-stream".to_owned()),
            &decode(&blob)?,
        )),
        _ => Err(RemoteCatalogError::Refused(
            "an embedded resource is neither text nor a blob".into(),
        )),
    }
}
