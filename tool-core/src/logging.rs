//! Log messages a handler sends to whoever serves its call, through its
//! [`Context`](crate::Context) (M8): the severity of a message ([`LogLevel`]), the message
//! itself ([`LogMessage`]), and where a transport sends it.
//!
//! A handler calls [`Context::log`](crate::Context::log); the transport that runs the call
//! decides where the message goes: an MCP server sends it as `notifications/message` to its
//! client, at the level the client asked for (`logging/setLevel`, or a request's own level on
//! 2026-07-28). When nobody listens the call costs a branch.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// How severe a log message is, least severe first (RFC 5424's levels, as MCP names them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// What happened, in the ordinary course.
    Info,
    /// Normal, but worth noting.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A part of the system failed.
    Critical,
    /// Someone must act now.
    Alert,
    /// The system cannot be used.
    Emergency,
}

impl LogLevel {
    /// The name MCP gives the level (`debug`, …, `emergency`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One log message of a call's handler (M8).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LogMessage {
    /// How severe it is.
    pub level: LogLevel,
    /// What it says: any JSON (a string, or an object of details).
    pub data: Value,
    /// The name of the logger it comes from, if it names one.
    pub logger: Option<String>,
}

impl LogMessage {
    /// A message of `level` saying `data`, from no named logger.
    pub fn new(level: LogLevel, data: impl Into<Value>) -> Self {
        Self {
            level,
            data: data.into(),
            logger: None,
        }
    }

    /// The same message, from the logger `name`.
    #[must_use]
    pub fn with_logger(mut self, name: impl Into<String>) -> Self {
        self.logger = Some(name.into());
        self
    }
}

/// Where the log messages of one call go, as its transport set it on the call's context.
#[derive(Clone)]
pub(crate) struct LogSink(Arc<dyn Fn(LogMessage) + Send + Sync>);

impl LogSink {
    pub(crate) fn new(sink: impl Fn(LogMessage) + Send + Sync + 'static) -> Self {
        Self(Arc::new(sink))
    }

    /// Sends one message.
    pub(crate) fn send(&self, message: LogMessage) {
        (self.0)(message);
    }
}
