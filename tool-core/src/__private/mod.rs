//! Support for the code the macros generate. Not public API: anything here may change in any
//! release.

mod autoref;
mod context;
mod expand_support;
mod handler;
mod parse;
mod render;

pub use autoref::*;
pub use context::*;
pub use expand_support::*;
pub use handler::*;
pub use parse::*;
pub use render::*;

pub use inventory;
pub use serde;
pub use serde_json;

pub use crate::approval::{Approval, ApprovalPredicate};
pub use crate::context::Context;
pub use crate::error::BoxError;
pub use crate::json::DecodeError;
pub use crate::json::Json;
pub use crate::policy::{BoxFuture, Policy};
pub use crate::schema::members::{Keys, absent_field, field_index, unknown_field, unknown_variant};
pub use crate::schema::read::{
    FieldSlot, ReadField, Slot, field, field_read, field_tree, finish_field, open_object,
    parse_decoded, read_members, variant_read,
};
pub use crate::schema::reader::{ReadError, Reader};
pub use crate::schema::{
    ArrayRules, Format, Invalid, ItemRules, Num, NumberRules, Pattern, Rules, Schema, SchemaGen,
    StringRules, check_array, check_items, check_number, check_string, run_validator,
};
pub use crate::tool::Registration;
pub use crate::tool::Site;
pub use crate::tool::{Annotations, IntoTool, Tool};
pub use crate::violation::{ParseCx, Rule};
