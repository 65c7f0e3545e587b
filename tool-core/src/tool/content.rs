//! Results with images, audio and resources beside their text (O3, M4): [`Image`] (any binary
//! content with a media type: an image, an audio clip), [`Resource`] (an embedded resource or
//! a link to one), [`WithImages`], and what a handler's result renders to ([`Rendered`]).

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::error::BoxError;
use crate::json::Json;
use crate::schema::{Schema, SchemaGen};
use crate::violation::ParseCx;

/// An image (or other binary content with a media type) in a tool's result (O3).
///
/// Each transport sends it in its own form: MCP image content, an Anthropic `tool_result`
/// image block, a Responses `input_image`; a provider that takes no images in tool results
/// gets a text stand-in naming it.
#[derive(Clone, PartialEq, Eq)]
pub struct Image {
    media_type: Arc<str>,
    data: Arc<[u8]>,
}

impl Image {
    /// An image of media type `media_type` (`image/png`, `image/jpeg`, …) with these bytes.
    pub fn new(media_type: impl Into<String>, data: impl Into<Vec<u8>>) -> Self {
        Self {
            media_type: Arc::from(media_type.into()),
            data: Arc::from(data.into()),
        }
    }

    /// A PNG image.
    pub fn png(data: impl Into<Vec<u8>>) -> Self {
        Self::new("image/png", data)
    }

    /// A JPEG image.
    pub fn jpeg(data: impl Into<Vec<u8>>) -> Self {
        Self::new("image/jpeg", data)
    }

    /// Its media type.
    pub fn media_type(&self) -> &str {
        &self.media_type
    }

    /// Its bytes.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// A WAV audio clip (M4).
    pub fn wav(data: impl Into<Vec<u8>>) -> Self {
        Self::new("audio/wav", data)
    }

    /// Whether it is an image (`image/…`): transports that take images take it as one.
    pub fn is_image(&self) -> bool {
        self.media_type.starts_with("image/")
    }

    /// Whether it is audio (`audio/…`, M4): MCP sends it as audio content.
    pub fn is_audio(&self) -> bool {
        self.media_type.starts_with("audio/")
    }

    /// A short text that stands for it where it cannot go:
    /// `[image: image/png, 1234 bytes]`, `[audio: audio/wav, 88 bytes]`, `[file: …]`.
    pub fn stand_in(&self) -> String {
        let kind = if self.is_image() {
            "image"
        } else if self.is_audio() {
            "audio"
        } else {
            "file"
        };
        format!("[{kind}: {}, {} bytes]", self.media_type, self.data.len())
    }
}

/// A resource in a tool's result (M4): embedded (its text, or its bytes) or linked (its URI,
/// for the client to read). MCP sends it as an embedded resource or a resource link; a
/// provider gets a text that stands for it ([`Resource::stand_in`]), which holds an embedded
/// text resource's text.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    media_type: Option<String>,
    #[serde(flatten)]
    body: ResourceBody,
}

/// What a [`Resource`] holds.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "resource", rename_all = "snake_case")]
enum ResourceBody {
    /// Its text, embedded.
    Text { text: String },
    /// Its bytes, embedded (base64 in JSON).
    Blob { blob: String },
    /// A link: the client reads it.
    Link {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}

impl Resource {
    /// The text resource at `uri`, embedded, of media type `media_type` (`text/plain`, …).
    pub fn text(
        uri: impl Into<String>,
        media_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self {
            uri: uri.into(),
            media_type: Some(media_type.into()),
            body: ResourceBody::Text { text: text.into() },
        }
    }

    /// The binary resource at `uri`, embedded, of media type `media_type`.
    pub fn blob(uri: impl Into<String>, media_type: impl Into<String>, data: &[u8]) -> Self {
        Self {
            uri: uri.into(),
            media_type: Some(media_type.into()),
            body: ResourceBody::Blob {
                blob: BASE64.encode(data),
            },
        }
    }

    /// A link to the resource at `uri`, named `name`, for the client to read.
    pub fn link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            media_type: None,
            body: ResourceBody::Link {
                name: name.into(),
                description: None,
            },
        }
    }

    /// The same resource, of media type `media_type` (for a link: what it points at).
    #[must_use]
    pub fn with_media_type(mut self, media_type: impl Into<String>) -> Self {
        self.media_type = Some(media_type.into());
        self
    }

    /// The same link, described by `description` (nothing for an embedded resource).
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        if let ResourceBody::Link { description: d, .. } = &mut self.body {
            *d = Some(description.into());
        }
        self
    }

    /// Its URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Its media type, if given.
    pub fn media_type(&self) -> Option<&str> {
        self.media_type.as_deref()
    }

    /// Its embedded text, for an embedded text resource.
    pub fn embedded_text(&self) -> Option<&str> {
        match &self.body {
            ResourceBody::Text { text } => Some(text),
            _ => None,
        }
    }

    /// Its embedded bytes in base64, for an embedded binary resource.
    pub fn embedded_blob(&self) -> Option<&str> {
        match &self.body {
            ResourceBody::Blob { blob } => Some(blob),
            _ => None,
        }
    }

    /// A link's name and description, for a link.
    pub fn link_name(&self) -> Option<(&str, Option<&str>)> {
        match &self.body {
            ResourceBody::Link { name, description } => Some((name, description.as_deref())),
            _ => None,
        }
    }

    /// A text that stands for it where it cannot go: an embedded text resource's header line
    /// and text (the model reads it), `[resource <uri>: <type>, <n> bytes]` for bytes, and
    /// `[resource link: <name> <uri>]` for a link.
    pub fn stand_in(&self) -> String {
        let media = self.media_type.as_deref().unwrap_or("unknown type");
        match &self.body {
            ResourceBody::Text { text } => format!("[resource {}: {media}]\n{text}", self.uri),
            ResourceBody::Blob { blob } => format!(
                "[resource {}: {media}, {} bytes]",
                self.uri,
                BASE64.decode(blob.as_bytes()).map_or(0, |b| b.len())
            ),
            ResourceBody::Link { name, .. } => format!("[resource link: {name} <{}>]", self.uri),
        }
    }
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.body {
            ResourceBody::Text { .. } => "text",
            ResourceBody::Blob { .. } => "blob",
            ResourceBody::Link { .. } => "link",
        };
        f.debug_struct("Resource")
            .field("uri", &self.uri)
            .field("media_type", &self.media_type)
            .field("kind", &kind)
            .finish()
    }
}

impl Serialize for Image {
    /// As `{"media_type": "image/png", "data": "<base64>"}`: a transcript holding an image
    /// stays plain JSON.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut image = serializer.serialize_struct("Image", 2)?;
        image.serialize_field("media_type", &*self.media_type)?;
        image.serialize_field("data", &BASE64.encode(&self.data))?;
        image.end()
    }
}

impl<'de> Deserialize<'de> for Image {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            media_type: String,
            data: String,
        }
        let wire = Wire::deserialize(deserializer)?;
        let data = BASE64
            .decode(wire.data.as_bytes())
            .map_err(|e| serde::de::Error::custom(format!("an image's data is not base64: {e}")))?;
        Ok(Image::new(wire.media_type, data))
    }
}

impl Image {
    /// Its bytes in standard base64, as most transports carry them.
    pub fn base64(&self) -> String {
        BASE64.encode(&self.data)
    }

    /// An image whose bytes arrive in standard base64.
    ///
    /// # Errors
    ///
    /// Returns why `data` is not base64.
    pub fn from_base64(
        media_type: impl Into<String>,
        data: &str,
    ) -> Result<Self, base64::DecodeError> {
        Ok(Self::new(media_type, BASE64.decode(data.as_bytes())?))
    }
}

impl fmt::Debug for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Image")
            .field("media_type", &self.media_type)
            .field("bytes", &self.data.len())
            .finish()
    }
}

/// A handler's result with images beside it (O3): the value renders for the model as it would
/// alone (E1), and the images go with it.
///
/// ```
/// use tool_core::{Image, WithImages};
///
/// # let png_bytes = vec![0x89, b'P', b'N', b'G'];
/// let chart = WithImages::new("Load over the last day.").image(Image::png(png_bytes));
/// assert_eq!(chart.images().len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct WithImages<T> {
    value: T,
    images: Vec<Image>,
    resources: Vec<Resource>,
}

impl<T> WithImages<T> {
    /// `value`, with no image yet.
    pub fn new(value: T) -> Self {
        Self {
            value,
            images: Vec::new(),
            resources: Vec::new(),
        }
    }

    /// Adds an image, or other binary content with a media type (audio, M4).
    #[must_use]
    pub fn image(mut self, image: Image) -> Self {
        self.images.push(image);
        self
    }

    /// Adds a resource, embedded or linked (M4).
    #[must_use]
    pub fn resource(mut self, resource: Resource) -> Self {
        self.resources.push(resource);
        self
    }

    /// The resources.
    pub fn resources(&self) -> &[Resource] {
        &self.resources
    }

    /// The value.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// The images.
    pub fn images(&self) -> &[Image] {
        &self.images
    }
}

thread_local! {
    /// The images and resources of the result being rendered on this thread, while
    /// [`render_rich`] runs.
    static COLLECTED: RefCell<Option<(Vec<Image>, Vec<Resource>)>> = const { RefCell::new(None) };
}

impl<T: Serialize> Serialize for WithImages<T> {
    /// Serializes the value alone; while a result is rendered for a call, the images are
    /// collected beside it.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        COLLECTED.with(|collected| {
            if let Some((images, resources)) = collected.borrow_mut().as_mut() {
                images.extend(self.images.iter().cloned());
                resources.extend(self.resources.iter().cloned());
            }
        });
        self.value.serialize(serializer)
    }
}

impl<T: Schema> Schema for WithImages<T> {
    const STRUCTURED: bool = T::STRUCTURED;

    fn schema(generator: &mut SchemaGen) -> Value {
        T::schema(generator)
    }

    /// The value alone: the model sends no images.
    fn parse(value: Json, cx: &mut ParseCx) -> Option<Self> {
        T::parse(value, cx).map(Self::new)
    }

    fn to_json(&self) -> Value {
        self.value.to_json()
    }
}

/// What a handler's result renders to: the text for the model (E1) and the images and
/// resources beside it (O3, M4).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendered {
    /// The text.
    pub text: String,
    /// The images (and audio), in the order the result holds them.
    pub images: Vec<Image>,
    /// The resources, in the order the result holds them.
    pub resources: Vec<Resource>,
}

impl From<String> for Rendered {
    fn from(text: String) -> Self {
        Self {
            text,
            images: Vec::new(),
            resources: Vec::new(),
        }
    }
}

/// Renders a handler's result (E1) with the images it carries (O3).
///
/// # Errors
///
/// Returns the serialization error.
pub fn render_rich<T: Serialize + ?Sized>(output: &T) -> Result<Rendered, BoxError> {
    let outer =
        COLLECTED.with(|collected| collected.borrow_mut().replace((Vec::new(), Vec::new())));
    let text = super::render_result(output);
    let (images, resources) = COLLECTED.with(|collected| {
        std::mem::replace(&mut *collected.borrow_mut(), outer).unwrap_or_default()
    });
    Ok(Rendered {
        text: text?,
        images,
        resources,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn o3_images_travel_beside_the_text_they_render_with() {
        let result = WithImages::new(serde_json::json!({"load": 0.5}))
            .image(Image::png(vec![1, 2, 3]))
            .image(Image::jpeg(vec![4]));
        let rendered = render_rich(&result).expect("renders");
        assert_eq!(rendered.text, r#"{"load":0.5}"#);
        assert_eq!(rendered.images.len(), 2);
        assert_eq!(rendered.images[0].media_type(), "image/png");
        assert_eq!(rendered.images[1].data(), [4]);
        // Outside a render, serializing collects nothing, and a render collects only its own.
        assert_eq!(
            serde_json::to_string(&result).expect("serializes"),
            r#"{"load":0.5}"#
        );
        let plain = render_rich("text").expect("renders");
        assert_eq!(plain, Rendered::from("text".to_owned()));
        assert_eq!(
            Image::png(vec![0; 10]).stand_in(),
            "[image: image/png, 10 bytes]"
        );
        let image = Image::png(vec![0, 255, 7]);
        let json = serde_json::to_value(&image).expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({"media_type": "image/png", "data": "AP8H"})
        );
        assert_eq!(
            serde_json::from_value::<Image>(json).expect("round-trips"),
            image
        );
        assert!(
            serde_json::from_value::<Image>(serde_json::json!({"media_type": "x", "data": "*"}))
                .is_err()
        );
    }

    /// M4: audio and resources travel beside the text too, each with a text stand-in.
    #[test]
    fn m4_audio_and_resources_render_beside_the_text() {
        let result = WithImages::new("done")
            .image(Image::wav(vec![0; 8]))
            .resource(Resource::text("test://r", "text/plain", "the body"))
            .resource(
                Resource::link("file:///report.pdf", "report").with_media_type("application/pdf"),
            );
        let rendered = render_rich(&result).expect("renders");
        assert_eq!(rendered.text, "done");
        assert_eq!(rendered.images[0].stand_in(), "[audio: audio/wav, 8 bytes]");
        assert!(rendered.images[0].is_audio() && !rendered.images[0].is_image());
        let stand_ins: Vec<String> = rendered.resources.iter().map(Resource::stand_in).collect();
        assert_eq!(
            stand_ins,
            [
                "[resource test://r: text/plain]\nthe body",
                "[resource link: report <file:///report.pdf>]"
            ]
        );
        assert_eq!(
            Resource::blob("test://b", "application/octet-stream", &[1, 2, 3]).stand_in(),
            "[resource test://b: application/octet-stream, 3 bytes]"
        );
        for resource in &rendered.resources {
            let json = serde_json::to_value(resource).expect("serializes");
            let back: Resource = serde_json::from_value(json).expect("reads back");
            assert_eq!(&back, resource);
        }
    }
}
