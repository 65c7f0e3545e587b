//! The strings that name one call: its id ([`CallId`]) and the tool name it used
//! ([`CallName`]).
//!
//! Both are shared, not copied: the model's call, its result, its record, its events and its
//! context hold one allocation. Both are also plain strings to the code that reads them: they
//! compare with `&str` and `String` (either way round), dereference to `str`, borrow as `str`
//! (a `HashMap<CallId, _>` is looked up with a `&str`), display and serialize as the string
//! itself.
//!
//! ```
//! use std::collections::HashMap;
//! use tool_core::{CallId, CallName};
//!
//! let id = CallId::from("c1");
//! let name = CallName::from(String::from("lookup-window"));
//! assert!(id == "c1" && "c1" == id);
//! let expected = String::from("lookup-window");
//! assert!(name == expected);
//! assert_eq!(id.len(), 2); // `str`'s methods through `Deref`
//!
//! let by_id: HashMap<CallId, u32> = HashMap::from([(id.clone(), 7)]);
//! assert_eq!(by_id.get("c1"), Some(&7));
//! let by_string: HashMap<String, u32> = HashMap::from([("c1".to_owned(), 7)]);
//! assert_eq!(by_string.get(&*id), Some(&7));
//!
//! assert_eq!(serde_json::to_string(&id).unwrap(), r#""c1""#);
//! assert_eq!(format!("{name}"), "lookup-window");
//! ```

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Declares a shared string type with every comparison and conversion a string has.
macro_rules! shared_str {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(Arc<str>);

        impl $name {
            /// The string.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The shared allocation.
            pub fn as_arc(&self) -> &Arc<str> {
                &self.0
            }
        }

        impl Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&*self.0, f)
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                Self(text.into())
            }
        }

        impl From<String> for $name {
            fn from(text: String) -> Self {
                Self(text.into())
            }
        }

        impl From<&String> for $name {
            fn from(text: &String) -> Self {
                Self(text.as_str().into())
            }
        }

        impl From<Box<str>> for $name {
            fn from(text: Box<str>) -> Self {
                Self(text.into())
            }
        }

        impl From<Arc<str>> for $name {
            fn from(text: Arc<str>) -> Self {
                Self(text)
            }
        }

        impl From<&Arc<str>> for $name {
            fn from(text: &Arc<str>) -> Self {
                Self(Arc::clone(text))
            }
        }

        impl From<&$name> for $name {
            fn from(text: &$name) -> Self {
                text.clone()
            }
        }

        impl From<$name> for Arc<str> {
            fn from(text: $name) -> Self {
                text.0
            }
        }

        impl From<$name> for String {
            fn from(text: $name) -> Self {
                text.0.as_ref().to_owned()
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                &*self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                &*self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &*self.0 == other.as_str()
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == &*other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == &*other.0
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                self.as_str() == &*other.0
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                Arc::<str>::deserialize(deserializer).map(Self)
            }
        }
    };
}

shared_str! {
    /// The id a model (or an MCP client) gave one tool call; its result carries it back.
    /// Untrusted text: compare it, never interpret it.
    CallId
}

shared_str! {
    /// The tool name a call used, as the model or client wrote it: untrusted until it is
    /// looked up among the tools a run advertised (A5).
    CallName
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap, HashSet};

    use super::*;

    // U3: ids and names compare with the strings a user's code holds, both ways round.
    #[test]
    fn u3_compares_with_str_and_string_both_ways() {
        let id = CallId::from("c1");
        let owned = String::from("c1");
        assert!(id == "c1");
        assert!(id == *"c1");
        assert!(id == owned);
        assert!("c1" == id);
        assert!(*"c1" == id);
        assert!(owned == id);
        assert!(id != "c2");
        let (name, other) = (CallName::from("a"), String::from("b"));
        assert!(name != other);
    }

    // U3: the same allocation is shared by clones and conversions from an `Arc<str>`.
    #[test]
    fn u3_clones_share_their_allocation() {
        let arc: Arc<str> = Arc::from("shared");
        let id = CallId::from(&arc);
        let copy = id.clone();
        assert!(Arc::ptr_eq(id.as_arc(), &arc));
        assert!(Arc::ptr_eq(copy.as_arc(), &arc));
        assert!(Arc::ptr_eq(&Arc::<str>::from(copy), &arc));
    }

    // U3: hashing and ordering are the string's, so maps and sets keyed by either look up
    // with the other.
    #[test]
    fn u3_maps_and_sets_look_up_by_str() {
        let names: HashSet<CallName> = ["b", "a"].into_iter().map(CallName::from).collect();
        assert!(names.contains("a"));
        let ordered: BTreeMap<CallId, u8> = BTreeMap::from([("z".into(), 1), ("a".into(), 2)]);
        assert_eq!(ordered.keys().next().map(CallId::as_str), Some("a"));
        assert_eq!(ordered.get("z"), Some(&1));
        let by_string: HashMap<String, u8> = HashMap::from([("c1".to_owned(), 3)]);
        assert_eq!(by_string.get(&*CallId::from("c1")), Some(&3));
    }

    // U3: serde and Display see the bare string.
    #[test]
    fn u3_serializes_and_displays_as_the_string() {
        let id = CallId::from("call \"7\"");
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, r#""call \"7\"""#);
        assert_eq!(serde_json::from_str::<CallId>(&json).unwrap(), id);
        assert!(serde_json::from_str::<CallId>("7").is_err());
        assert_eq!(id.to_string(), "call \"7\"");
        assert_eq!(format!("{id:?}"), r#""call \"7\"""#);
    }
}
