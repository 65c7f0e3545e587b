//! A test's own `tracing` subscriber, installed on its thread so that none of its events and
//! spans go unrecorded.

#![allow(unreachable_pub)]

use std::sync::OnceLock;

use tracing::subscriber::{DefaultGuard, NoSubscriber};
use tracing::{Dispatch, Subscriber};

/// Makes `subscriber` this thread's default until the guard is dropped.
///
/// `tracing` caches, per callsite, whether any subscriber wants it. While a process has at most
/// one live subscriber, a callsite first reached on another thread (another test's) is asked
/// only of that thread's default, which is none: the callsite is cached as wanted by nobody, and
/// this thread's events there go unrecorded now and then. A second, inert subscriber kept
/// alive for the whole process makes every registration ask each live subscriber; installing
/// this one asks every callsite reached before again.
pub fn install(subscriber: impl Subscriber + Send + Sync + 'static) -> DefaultGuard {
    static INERT: OnceLock<Dispatch> = OnceLock::new();
    INERT.get_or_init(|| Dispatch::new(NoSubscriber::default()));
    tracing::subscriber::set_default(subscriber)
}
