//! When to retry a failed request, and how long to wait first (V2).
//!
//! A request is retried on a connection failure, a timeout, and the statuses 408, 409, 429
//! and 5xx, with bounded exponential backoff and jitter, unless the provider says otherwise:
//! `x-should-retry: true` forces a retry, `false` forbids it; a 429 whose error says
//! `insufficient_quota` is not retried (waiting does not buy quota); `retry-after-ms` and
//! `retry-after` (seconds or an HTTP date) set the wait.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;

/// How a driver retries a request that failed before any of its answer was handed on.
///
/// Retries happen only before the first byte of the streamed answer reaches the agent: a
/// stream that breaks later is an error, never a silent restart.
///
/// # What counts as before the answer
///
/// Everything up to the first byte of a success response's body: a connection that fails,
/// no status within the response timeout, a retryable status, and also a success status
/// whose body is empty, breaks, or stays silent for the idle timeout
/// (`idle_timeout(…)` on the driver's builder, default 600 s, chosen for reasoning models
/// that think quietly) before its first byte. Nothing was handed on in any of these cases,
/// so another attempt cannot duplicate or drop a piece of the answer; note that the
/// provider may still bill the abandoned attempt. To bound how long a silent server holds
/// a run, lower the idle timeout: the worst case is about
/// `(retries + 1) × idle timeout` plus the backoff. A success response that is not an event
/// stream (an HTML page) is not retried: it will not change by asking again.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::providers::RetryPolicy;
///
/// let policy = RetryPolicy::new()
///     .max_retries(4)
///     .backoff(Duration::from_millis(250), Duration::from_secs(4));
/// assert_eq!(policy.retries(), 4);
/// assert_eq!(RetryPolicy::none().retries(), 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    max_retries: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    max_retry_after: Duration,
}

impl RetryPolicy {
    /// Retries after the first attempt, by default.
    pub const DEFAULT_MAX_RETRIES: u32 = 2;
    /// The first backoff, by default.
    pub const DEFAULT_INITIAL_BACKOFF: Duration = Duration::from_millis(500);
    /// The longest backoff, by default.
    pub const DEFAULT_MAX_BACKOFF: Duration = Duration::from_secs(8);
    /// The longest wait a `retry-after` header may ask for, by default.
    pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

    /// The default policy: 2 retries, backoff from 0.5 s doubling up to 8 s (each wait cut by
    /// up to a quarter at random), and `retry-after` honoured up to 60 s.
    pub fn new() -> Self {
        Self {
            max_retries: Self::DEFAULT_MAX_RETRIES,
            initial_backoff: Self::DEFAULT_INITIAL_BACKOFF,
            max_backoff: Self::DEFAULT_MAX_BACKOFF,
            max_retry_after: Self::DEFAULT_MAX_RETRY_AFTER,
        }
    }

    /// No retry at all: the first failure is returned.
    pub fn none() -> Self {
        Self::new().max_retries(0)
    }

    /// Sets how many times a failed request is sent again (the first attempt not counted).
    #[must_use]
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// Sets the backoff: the first wait, doubled at each retry up to `max`.
    #[must_use]
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self
    }

    /// Sets the longest wait a `retry-after` (or `retry-after-ms`) header may ask for. A
    /// provider asking for longer gets its error returned at once, with
    /// [`crate::ApiError::retry_after`] set, rather than a retry.
    #[must_use]
    pub fn max_retry_after(mut self, max: Duration) -> Self {
        self.max_retry_after = max;
        self
    }

    /// How many retries are allowed.
    pub fn retries(&self) -> u32 {
        self.max_retries
    }

    /// The wait before retry number `retry` (from 1) when the provider asked for none:
    /// `initial × 2^(retry-1)`, at most the maximum, less up to a quarter at random.
    pub(crate) fn backoff_delay(&self, retry: u32) -> Duration {
        let exp = retry.saturating_sub(1).min(30);
        let base = self
            .initial_backoff
            .saturating_mul(1u32 << exp)
            .min(self.max_backoff);
        base.mul_f64(1.0 - 0.25 * jitter_unit())
    }

    /// The wait before a retry, given what the provider asked for: its `retry-after`, if it
    /// is within the policy's maximum, else the backoff; `None` when it asked for longer.
    pub(crate) fn delay(&self, retry: u32, asked: Option<Duration>) -> Option<Duration> {
        match asked {
            Some(wait) if wait <= self.max_retry_after => Some(wait),
            Some(_) => None,
            None => Some(self.backoff_delay(retry)),
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self::new()
    }
}

/// A number in `[0, 1)`, different at each call.
fn jitter_unit() -> f64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    // The top 53 bits make an exact f64 in [0, 1).
    #[allow(clippy::cast_precision_loss)]
    let unit = (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64;
    unit
}

/// Whether a failed status is worth retrying: `x-should-retry` first (the provider knows
/// best), then never for `insufficient_quota`, then 408, 409, 429 and 5xx.
pub(crate) fn status_is_retryable(status: u16, should_retry: Option<bool>, quota: bool) -> bool {
    match should_retry {
        Some(forced) => forced,
        None if quota => false,
        None => matches!(status, 408 | 409 | 429) || status >= 500,
    }
}

/// The `x-should-retry` header: `Some(true)` or `Some(false)` when it says so.
pub(crate) fn should_retry_header(headers: &HeaderMap) -> Option<bool> {
    match headers.get("x-should-retry")?.to_str().ok()?.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// How long the provider asks to wait: `retry-after-ms` (milliseconds), else `retry-after`
/// (seconds, or an HTTP date relative to `now`).
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = header("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses an HTTP date in its preferred form, IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`,
/// RFC 9110 §5.6.7). The obsolete forms are not read.
pub(crate) fn parse_http_date(text: &str) -> Option<SystemTime> {
    let (_weekday, rest) = text.split_once(", ")?;
    let mut parts = rest.split(' ');
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':');
    let hour: u64 = clock.next()?.parse().ok()?;
    let minute: u64 = clock.next()?.parse().ok()?;
    let second: u64 = clock.next()?.parse().ok()?;
    if parts.next()? != "GMT" || parts.next().is_some() || clock.next().is_some() {
        return None;
    }
    if !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 || year < 1970 {
        return None;
    }
    let days = u64::try_from(days_from_civil(year, month, i64::from(day))).ok()?;
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second;
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_static(v));
        }
        map
    }

    #[test]
    fn v2_retryable_statuses_and_the_providers_say() {
        for status in [408, 409, 429, 500, 502, 503, 529] {
            assert!(status_is_retryable(status, None, false), "{status}");
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(!status_is_retryable(status, None, false), "{status}");
        }
        assert!(!status_is_retryable(429, None, true), "insufficient_quota");
        assert!(
            status_is_retryable(400, Some(true), false),
            "x-should-retry: true"
        );
        assert!(
            !status_is_retryable(503, Some(false), false),
            "x-should-retry: false"
        );
        assert_eq!(
            should_retry_header(&headers(&[("x-should-retry", "false")])),
            Some(false)
        );
        assert_eq!(
            should_retry_header(&headers(&[("x-should-retry", "maybe")])),
            None
        );
    }

    #[test]
    fn v2_retry_after_in_every_form() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        let wait = |pairs| retry_after(&headers(pairs), now);
        assert_eq!(wait(&[("retry-after", "1")]), Some(Duration::from_secs(1)));
        assert_eq!(
            wait(&[("retry-after", "0.5")]),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            wait(&[("retry-after-ms", "20"), ("retry-after", "9")]),
            Some(Duration::from_millis(20)),
            "retry-after-ms wins"
        );
        assert_eq!(
            wait(&[("retry-after", "Sun, 06 Nov 1994 08:49:40 GMT")]),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            wait(&[("retry-after", "Sun, 06 Nov 1994 08:49:00 GMT")]),
            Some(Duration::ZERO),
            "a date in the past means now"
        );
        assert_eq!(wait(&[("retry-after", "soon")]), None);
        assert_eq!(wait(&[("retry-after", "-3")]), None);
        assert_eq!(wait(&[]), None);
    }

    #[test]
    fn http_dates_parse_exactly() {
        let t = parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(t, Some(UNIX_EPOCH));
        let t = parse_http_date("Tue, 29 Feb 2028 23:59:59 GMT").map(|t| {
            t.duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or_default()
        });
        assert_eq!(t, Some(1_835_481_599));
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), None);
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 UTC"), None);
        assert_eq!(parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT"), None);
    }

    #[test]
    fn v2_backoff_is_exponential_bounded_and_jittered() {
        let policy =
            RetryPolicy::new().backoff(Duration::from_millis(100), Duration::from_millis(350));
        for _ in 0..50 {
            let first = policy.backoff_delay(1);
            assert!(first <= Duration::from_millis(100) && first >= Duration::from_millis(75));
            let second = policy.backoff_delay(2);
            assert!(second <= Duration::from_millis(200) && second >= Duration::from_millis(150));
            let capped = policy.backoff_delay(30);
            assert!(capped <= Duration::from_millis(350));
        }
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(2))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(policy.delay(1, Some(Duration::from_secs(3600))), None);
    }
}
