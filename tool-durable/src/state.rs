//! The keys of a durable run's workflow state, which [`crate::RunStatus`] reads (W5).

/// Where the run is: [`crate::Phase`].
pub(crate) const PHASE: &str = "phase";
/// The calls waiting for a decision, with their awakeable ids (W3).
pub(crate) const PENDING: &str = "pending";
/// The run's usage so far (L2, W5).
pub(crate) const USAGE: &str = "usage";
/// The calls decided so far, each with the decision the run took (W8).
pub(crate) const DECIDED: &str = "decided";
