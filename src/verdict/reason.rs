//! The fixed, documented set of reason codes carried by skips, deferrals and failures.
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Breaker open (half-open probes K >= 1): fail fast, no network call.
    CircuitOpen,
    /// Breaker open in "no probe" mode (K = 0): seed 001's cooldown.
    Cooldown,
    /// Half-open and all K probe leases are held by other calls.
    HalfOpenBusy,
    /// The shared rate gate has no slot now (soft limit, or closed by a 429).
    RateLimited,
    /// The provider asked for a wait longer than the cap or the remaining budget.
    RetryAfterExceedsCap,
    /// The cap on calls in flight across all workers is reached.
    InFlightCap,
    /// The item's total time budget is spent.
    BudgetExhausted,
    /// This provider used all its attempts for the item on retryable failures.
    AttemptsExhausted,
    /// Fail over first: the provider failed retryably and the item moved on at once to another
    /// provider admissible then, instead of backing off; not tried again by this item. Retryable:
    /// `until_ms` is when the skipped backoff would have ended.
    FailedOver,
    /// The provider answered with a non-retryable outcome (400/404/409/422, auth, unsafe method).
    NonRetryable,
    /// The response did not pass the provider's response check.
    CheckFailed,
    /// The vendor's content policy refused the input (a 400 saying so) or the answer (a refusal,
    /// a filtered finish): another provider may take it; it says nothing of this one's health.
    ContentPolicy,
    /// A 400 saying the input is longer than the model's context (`context_limit`).
    ContextTooLong,
    /// The shared state store could not be reached (fail-closed).
    StoreUnavailable,
    /// A streamed answer broke after its first chunk reached the caller (dropped, idle too
    /// long): the call ends with that model's error, never with another model's text appended.
    StreamBroken,
    /// Its weight is 0: it takes no new calls (only a half-open probe), so traffic drains away.
    Drained,
    /// The provider's retry budget is spent: the retries of the window are at their share of its
    /// calls plus the floor. Retryable: `until_ms` is when the window's oldest retry leaves it.
    RetryBudget,
    /// The calls in flight across the fleet are at the limit it learned from the provider
    /// (`fleet_limit`): a slot frees when one of them ends.
    ConcurrencyLimit,
    /// The provider's tokens per minute, shared by the fleet, have no room for the call's
    /// estimate now (`token_limit`): the window frees it by `until_ms`.
    TokenLimited,
    /// The provider's spend cap for its period (a UTC day or month) is reached: no call until
    /// the period ends (`until_ms`).
    SpendCap,
    /// The item's key (its Fair Share Key) has used a Key Quota of its period, or the calls it has
    /// out hold the rest (`key_quota`): no call of the key until `until_ms`.
    KeyQuota,
}

impl Reason {
    pub const ALL: [Reason; 21] = [
        Reason::CircuitOpen,
        Reason::Cooldown,
        Reason::HalfOpenBusy,
        Reason::RateLimited,
        Reason::RetryAfterExceedsCap,
        Reason::InFlightCap,
        Reason::BudgetExhausted,
        Reason::AttemptsExhausted,
        Reason::FailedOver,
        Reason::NonRetryable,
        Reason::CheckFailed,
        Reason::ContentPolicy,
        Reason::ContextTooLong,
        Reason::StoreUnavailable,
        Reason::StreamBroken,
        Reason::Drained,
        Reason::RetryBudget,
        Reason::ConcurrencyLimit,
        Reason::TokenLimited,
        Reason::SpendCap,
        Reason::KeyQuota,
    ];

    pub fn parse(s: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::CircuitOpen => "circuit_open",
            Reason::Cooldown => "cooldown",
            Reason::HalfOpenBusy => "half_open_busy",
            Reason::RateLimited => "rate_limited",
            Reason::RetryAfterExceedsCap => "retry_after_exceeds_cap",
            Reason::InFlightCap => "in_flight_cap",
            Reason::BudgetExhausted => "budget_exhausted",
            Reason::AttemptsExhausted => "attempts_exhausted",
            Reason::FailedOver => "failed_over",
            Reason::NonRetryable => "non_retryable",
            Reason::CheckFailed => "check_failed",
            Reason::ContentPolicy => "content_policy",
            Reason::ContextTooLong => "context_too_long",
            Reason::StoreUnavailable => "store_unavailable",
            Reason::StreamBroken => "stream_broken",
            Reason::Drained => "drained",
            Reason::RetryBudget => "retry_budget",
            Reason::ConcurrencyLimit => "concurrency_limit",
            Reason::TokenLimited => "token_limited",
            Reason::SpendCap => "spend_cap",
            Reason::KeyQuota => "key_quota",
        }
    }

    /// Whether trying again later can help (deferred) or not (failed).
    pub fn is_retryable(self) -> bool {
        !matches!(
            self,
            Reason::NonRetryable
                | Reason::CheckFailed
                | Reason::ContentPolicy
                | Reason::ContextTooLong
                | Reason::StreamBroken
                | Reason::Drained
        )
    }
}
