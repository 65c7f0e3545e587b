//! The maintenance domain of DESIGN §1, shared by the examples `maintenance` (an agent run
//! end to end) and `mcp_server` (the same tools served over MCP): an in-memory window service,
//! the principals who ask, and two tools with their policies.
//!
//! - `lookup-window` ([`LookupWindow`]) finds the authorized maintenance window of a service;
//!   it is hidden from guests, and the service still checks each lookup's resource.
//! - `restart-service` ([`RestartService`]) is offered to admins only, and a restart of a
//!   production service waits for someone to approve it ([`restart_needs_ok`], H1): the run
//!   pauses (`examples/approvals.rs`), or over MCP the client's user is asked (H6).
//!
//! The principal and the services are put in the [`Context`] by the application, never by the
//! model.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};

use serde::Serialize;
use tool_runtime::approval::Approval;
use tool_runtime::{BoxError, Context, Schema, ToolError, tool};

// ─── The application ────────────────────────────────────────────────────────────────────────

/// What a principal may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Sees no maintenance tool.
    Guest,
    /// Looks maintenance windows up.
    Operator,
    /// Looks windows up and restarts services.
    Admin,
}

/// The authenticated caller, put in the run's context by the application (never by the model).
#[derive(Debug, Clone)]
pub struct Principal {
    /// Who it is.
    pub name: &'static str,
    /// What it may do.
    pub role: Role,
    /// The services whose maintenance this principal may see.
    pub services: &'static [&'static str],
}

/// A principal named `name` with role `role`, who may see the demo's services.
pub fn principal(name: &'static str, role: Role) -> Principal {
    Principal {
        name,
        role,
        services: &["svc-42", "svc-7", "svc-billing", "svc-legacy"],
    }
}

/// One scheduled window.
#[derive(Debug, Clone)]
struct Window {
    in_days: u32,
    starts_at: &'static str,
    ends_at: &'static str,
}

/// Why a lookup found nothing.
#[derive(Debug)]
pub enum LookupError {
    /// No window, or none the caller may see (the two are not told apart).
    NoWindow,
    /// The backing store failed: an internal detail, never for the model.
    Backend(String),
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupError::NoWindow => f.write_str("no maintenance window"),
            LookupError::Backend(detail) => write!(f, "maintenance store failed: {detail}"),
        }
    }
}

impl std::error::Error for LookupError {}

/// The application's maintenance windows, in memory.
#[derive(Debug)]
pub struct Windows {
    by_service: HashMap<&'static str, Window>,
}

impl Windows {
    /// The demo's windows: `svc-42` in 3 days, `svc-billing` in 20; `svc-legacy`'s store is
    /// down.
    pub fn demo() -> Self {
        let mut by_service = HashMap::new();
        by_service.insert(
            "svc-42",
            Window {
                in_days: 3,
                starts_at: "2026-12-01T02:00:00Z",
                ends_at: "2026-12-01T04:00:00Z",
            },
        );
        by_service.insert(
            "svc-billing",
            Window {
                in_days: 20,
                starts_at: "2026-12-18T01:00:00Z",
                ends_at: "2026-12-18T01:30:00Z",
            },
        );
        Self { by_service }
    }

    /// The next window of `service_id` within `days`, if `principal` may see it. The
    /// principal comes from the trusted context, not from the model's arguments.
    ///
    /// # Errors
    ///
    /// [`LookupError::NoWindow`] when there is none the caller may see,
    /// [`LookupError::Backend`] when the store fails.
    pub async fn find_authorized(
        &self,
        principal: &Principal,
        service_id: &str,
        days: u32,
    ) -> Result<WindowSummary, LookupError> {
        if service_id == "svc-legacy" {
            return Err(LookupError::Backend(
                "connection to maint-db.internal:5432 refused for user maint_ro".to_owned(),
            ));
        }
        if !principal.services.contains(&service_id) {
            return Err(LookupError::NoWindow);
        }
        match self.by_service.get(service_id) {
            Some(w) if w.in_days <= days => Ok(WindowSummary {
                starts_at: w.starts_at.to_owned(),
                ends_at: w.ends_at.to_owned(),
            }),
            _ => Err(LookupError::NoWindow),
        }
    }
}

// ─── The tools ──────────────────────────────────────────────────────────────────────────────

/// Input of the maintenance lookup.
#[derive(Schema)]
pub struct WindowQuery {
    /// The service identifier supplied by the user.
    #[schema(
        min_len = 1,
        max_len = 64,
        pattern = "^[a-z0-9-]+$",
        example = "svc-42"
    )]
    pub service_id: String,
    /// How many days ahead to look.
    #[schema(default = 7, range = 1..=30)]
    pub days: u32,
}

/// The approved fields of a window: nothing else reaches the model. It derives `Schema` too,
/// so the tool publishes it as its output schema (O1).
#[derive(Debug, Serialize, Schema)]
pub struct WindowSummary {
    /// When the window starts (RFC 3339).
    pub starts_at: String,
    /// When it ends (RFC 3339).
    pub ends_at: String,
}

// The windows and the principal are context parameters (C1): the application puts them in the
// run's context, the schema has no property for them, and a run whose context lacks either is
// not offered the tool (`can_view_maintenance` is asked only when both are there). The doc
// comment below is the description the model reads.
/// Find the authorized maintenance window for a service.
#[tool(
    name = "lookup-window",
    available = can_view_maintenance,
    title = "Look up a maintenance window",
    read_only,
    open_world = false
)]
pub async fn find_window(
    windows: &Windows,
    principal: &Principal,
    input: WindowQuery,
) -> Result<WindowSummary, BoxError> {
    match windows
        .find_authorized(principal, &input.service_id, input.days)
        .await
    {
        Err(LookupError::NoWindow) => {
            Err(ToolError::new("No maintenance window is scheduled.").into())
        }
        other => other.map_err(Into::into),
    }
}

/// Whether the caller may see maintenance windows at all (observational, A1). Asked only
/// when the context holds a [`Principal`], which `find_window` takes (C1).
///
/// # Errors
///
/// Fails when the context holds no [`Principal`] (an application bug).
pub async fn can_view_maintenance(ctx: &Context) -> Result<bool, BoxError> {
    let principal = ctx.require::<Principal>()?;
    Ok(matches!(principal.role, Role::Operator | Role::Admin))
}

/// Input of a restart.
#[derive(Schema)]
pub struct RestartInput {
    /// The service to restart.
    #[schema(
        min_len = 1,
        max_len = 64,
        pattern = "^[a-z0-9-]+$",
        example = "svc-42"
    )]
    pub service_id: String,
}

/// What a restart reports: the approved fields only.
#[derive(Debug, Serialize)]
pub struct Restarted {
    /// The service restarted.
    pub service_id: String,
    /// Its state now.
    pub state: &'static str,
}

/// The restarts this process made, in the context when the application wants a record.
#[derive(Debug, Default)]
pub struct RestartLog(Mutex<Vec<String>>);

impl RestartLog {
    /// The services restarted so far, in order.
    pub fn entries(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn record(&self, service_id: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(service_id.to_owned());
    }
}

/// The services that serve production traffic: restarting one needs approval.
pub const PRODUCTION: &[&str] = &["svc-42", "svc-billing"];

// It takes the principal (C1), unused, so that it is offered only to a run that names one,
// before `is_admin` is asked.
/// Restart a service now.
#[tool(
    name = "restart-service",
    available = is_admin,
    approval = restart_needs_ok,
    destructive
)]
pub async fn restart_service(
    ctx: &Context,
    _admin: &Principal,
    input: RestartInput,
) -> Result<Restarted, BoxError> {
    if let Some(log) = ctx.get::<RestartLog>() {
        log.record(&input.service_id);
    }
    Ok(Restarted {
        service_id: input.service_id,
        state: "restarting",
    })
}

/// Whether a restart waits for a yes (H1): a production service's does. It sees the
/// validated input only.
///
/// # Errors
///
/// Never; an error would end the run, as a policy error does.
pub async fn restart_needs_ok(_ctx: &Context, input: &RestartInput) -> Result<Approval, BoxError> {
    Ok(if PRODUCTION.contains(&input.service_id.as_str()) {
        Approval::required(format!(
            "{} serves production traffic: a restart drops its open connections",
            input.service_id
        ))
    } else {
        Approval::NotRequired
    })
}

/// Only admins are offered restarts. Asked only when the context holds a [`Principal`], which
/// `restart_service` takes (C1).
///
/// # Errors
///
/// Fails when the context holds no [`Principal`] (an application bug).
pub fn is_admin(ctx: &Context) -> Result<bool, BoxError> {
    Ok(ctx.require::<Principal>()?.role == Role::Admin)
}
