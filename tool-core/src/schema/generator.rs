//! Rendering schemas, with `$defs`/`$ref` for recursive types.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value};

use super::Schema;

/// Why a type's schema cannot be a tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The root is not an object: a tool's input must be a struct (S1).
    #[error("a tool's input schema must be an object (a struct), not {found}")]
    RootNotObject {
        /// What the root renders as.
        found: String,
    },
    /// The schema uses a keyword the parser cannot enforce (C3): publishing it would promise
    /// a check that never runs.
    #[error(
        "the input schema uses `{}` at `{}`, which the parser cannot enforce: {}",
        .0.keyword,
        .0.at,
        .0.reason
    )]
    Unsupported(Box<Unsupported>),
}

/// A keyword of a schema that the parser cannot enforce ([`SchemaError::Unsupported`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// The keyword.
    pub keyword: String,
    /// The JSON pointer of the keyword in the schema as its generator wrote it.
    pub at: String,
    /// Why it cannot be enforced, or what to write instead.
    pub reason: String,
}

/// Renders the schemas of a type and of everything it holds.
///
/// Each named type (a struct or enum that derives [`Schema`]) renders inline, unless it
/// refers to itself: then it goes into `$defs` and every use is a `$ref`. A type that refers
/// back to the root uses `{"$ref": "#"}`.
#[derive(Debug, Default)]
pub struct SchemaGen {
    stack: Vec<&'static str>,
    recursive: HashSet<&'static str>,
    names: HashMap<&'static str, String>,
    taken: HashSet<String>,
    defs: BTreeMap<String, Value>,
    /// Why the schema being rendered cannot be a tool's input, if a type said so.
    error: Option<SchemaError>,
}

impl SchemaGen {
    /// A generator with nothing rendered yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Renders the schema of `T` in this generator.
    pub fn subschema<T: Schema>(&mut self) -> Value {
        T::schema(self)
    }

    /// Renders a named type: `key` identifies it (its full type name), `short` names its
    /// entry in `$defs`, `body` renders it. Call this from [`Schema::schema`] of a type that
    /// can be recursive.
    pub fn named(
        &mut self,
        key: &'static str,
        short: &'static str,
        body: impl FnOnce(&mut Self) -> Value,
    ) -> Value {
        if let Some(reference) = self.enter_named(key, short) {
            return reference;
        }
        let rendered = body(self);
        self.leave_named(key, short, rendered)
    }

    /// The reference that stands for the named type `key` when it is being rendered already
    /// or was rendered into `$defs`; else `None`, and `key` is now being rendered.
    fn enter_named(&mut self, key: &'static str, short: &'static str) -> Option<Value> {
        if self.stack.first() == Some(&key) {
            return Some(ref_to("#".to_owned()));
        }
        if self.stack.contains(&key) {
            self.recursive.insert(key);
            let name = self.def_name(key, short);
            return Some(ref_to(format!("#/$defs/{name}")));
        }
        if let Some(name) = self.names.get(key).filter(|n| self.defs.contains_key(*n)) {
            return Some(ref_to(format!("#/$defs/{name}")));
        }
        self.stack.push(key);
        None
    }

    /// The schema of the named type `key` once rendered: itself, or a reference to it in
    /// `$defs` when it is recursive and nested.
    fn leave_named(&mut self, key: &'static str, short: &'static str, rendered: Value) -> Value {
        self.stack.pop();
        if self.recursive.contains(key) && !self.stack.is_empty() {
            let name = self.def_name(key, short);
            self.defs.insert(name.clone(), rendered);
            return ref_to(format!("#/$defs/{name}"));
        }
        rendered
    }

    fn def_name(&mut self, key: &'static str, short: &'static str) -> String {
        if let Some(name) = self.names.get(key) {
            return name.clone();
        }
        let mut name = short.to_owned();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{short}{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        self.names.insert(key, name.clone());
        name
    }

    /// Records that the schema being rendered cannot be a tool's input: [`render_root`] returns
    /// the first such error (a type whose schema comes from elsewhere, C3, reports what the
    /// parser cannot enforce this way).
    pub fn reject(&mut self, error: SchemaError) {
        self.error.get_or_insert(error);
    }

    /// Takes the `$defs` rendered so far.
    pub fn take_defs(&mut self) -> BTreeMap<String, Value> {
        std::mem::take(&mut self.defs)
    }
}

fn ref_to(target: String) -> Value {
    let mut m = Map::new();
    m.insert("$ref".to_owned(), Value::String(target));
    Value::Object(m)
}

/// The error of a root schema whose `type` (`type_`, if any) is not `object`.
pub(crate) fn root_not_object(type_: Option<&Value>) -> SchemaError {
    let found = type_.map_or_else(
        || "a schema without `type: object`".to_owned(),
        Value::to_string,
    );
    SchemaError::RootNotObject { found }
}

/// Renders the input schema of a tool whose input is `T`: an object root (S1) with its
/// `$defs`, if any.
///
/// # Errors
///
/// Returns [`SchemaError::RootNotObject`] when `T` does not render as an object, or the error
/// a type recorded with [`SchemaGen::reject`].
pub fn render_root<T: Schema>() -> Result<Value, SchemaError> {
    let mut generator = SchemaGen::new();
    let root = T::schema(&mut generator);
    finish_root(root, generator)
}

/// The root schema `root` rendered by `generator`, with its `$defs`; it must be an object.
fn finish_root(mut root: Value, mut generator: SchemaGen) -> Result<Value, SchemaError> {
    if let Some(error) = generator.error.take() {
        return Err(error);
    }
    let defs = generator.take_defs();
    let Some(obj) = root.as_object_mut() else {
        return Err(SchemaError::RootNotObject {
            found: root.to_string(),
        });
    };
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Err(root_not_object(obj.get("type")));
    }
    if !defs.is_empty() {
        obj.insert(
            "$defs".to_owned(),
            Value::Object(defs.into_iter().collect()),
        );
    }
    Ok(root)
}
