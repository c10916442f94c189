//! What crosses between the item machine and its caller: the steps it hands out, the effect of
//! an outcome on the provider's shared rows, an attempt's log line and the item's report.
use crate::choose::hedge::CallTag;
use crate::choose::routing::Route;
use crate::choose::skip::Skip;
use crate::facts::stream::StreamStep;
use crate::limits::breaker::Transition;
use crate::rows::Writes;
use crate::verdict::outcome::Health;
use crate::verdict::reason::Reason;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Step {
    /// Call provider `provider` (attempt n on it) within `deadline_ms`.
    Call {
        provider: usize,
        name: String,
        attempt: u32,
        deadline_ms: u64,
        probe: bool,
        /// A repair round: ask the provider again with its last answer's validation errors.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        repair: bool,
        /// A streamed answer broke after part of it reached the caller: ask this provider to
        /// continue it (the conversation and the partial answer), on the same stream.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        continuation: bool,
        /// Absent when none (answers stay short: every byte is written and parsed per poll).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        idempotency_key: Option<String>,
        /// A streamed item's limits for this attempt (absent for a call that does not stream).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stream: Option<StreamStep>,
        /// A hedging chain's call: its number (its outcome names it) and when to ask for a hedge
        /// (absent on a chain that does not hedge).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hedging: Option<CallTag>,
    },
    /// No new call: wait for the calls out (and ask for a hedge after `hedge_after_ms`, if set).
    Await {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hedge_after_ms: Option<u64>,
    },
    /// Wait, then poll again.
    Sleep { ms: u64, cause: WaitCause },
    /// Item Concurrency *Auto*: `provider`'s window is full. Wait in line until a call to it ends
    /// (an outcome's `wake` names the provider), at most `ms`, then poll again.
    Queue { provider: usize, ms: u64 },
    Done {
        provider: usize,
        name: String,
        fallback: bool,
        /// The answer checks the serving answer passed (none when the node checked nothing).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        checks: Vec<String>,
    },
    /// Retryable trouble everywhere: hand the item back with the time to try again.
    Defer { retry_at_ms: u64, reason: Reason },
    /// Nothing left that could succeed by trying again.
    Fail { reason: Reason },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitCause {
    Backoff,
    RetryAfter,
    RateLimitReset,
    /// A reserved slot of the shared rate gate.
    RateGate,
    /// In line for a provider that can take the call soon (a short Retry-After, a gate or an
    /// in-flight cap about to free), paced so the items in line do not all wake at once.
    InLine,
}

/// A step plus the rows the caller must write atomically before carrying it out. If the
/// write loses a race, re-read the rows and poll again: nothing was committed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Poll {
    pub step: Step,
    pub writes: Option<Writes>,
    pub transition: Option<Transition>,
}

/// What an outcome does to the provider's shared state; apply with [`crate::item::record::record`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    pub provider: usize,
    pub health: Health,
    pub holder: String,
    /// Status or error code, kept as the breaker's last failure.
    pub label: String,
    pub gate_close_until_ms: Option<u64>,
    pub release_in_flight: bool,
    /// How long the call took, for its provider's latency row (latency routing only).
    pub latency_ms: Option<u64>,
    /// `latency_ms` is a streamed call's time to its first committing chunk (its own lane).
    pub first_chunk: bool,
    /// This call among all the fleet's, as a number (its item's holder and attempt, hashed):
    /// which calls deposit into the retry budget, without drawing from the item's randomness.
    pub sample: u64,
    /// What the call taught its window (Item Concurrency Auto), for the fleet's learned limit.
    pub window: Option<crate::limits::learned_limit::WindowNews>,
    /// The call held a slot of the fleet's limit: what its end tells the limit's row.
    pub seat: Option<crate::limits::fleet_limit::Released>,
    /// The call reserved tokens (`token_limit`): what it used, to settle its provider's row.
    pub tokens: Option<crate::limits::token_limit::Settle>,
    /// A streamed call's news of its provider's pace to a first chunk (`facts::pace_row`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<crate::facts::pace_row::PaceNews>,
    /// A paced streamed answer's longest gap between chunks (`facts::pace_row::learn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace_gap: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptLog {
    pub provider: usize,
    pub name: String,
    pub attempt: u32,
    pub outcome: String,
    pub probe: bool,
    pub wait_ms: u64,
    pub wait_cause: Option<WaitCause>,
    pub retry_after: bool,
    /// What the outcome said about the provider's health.
    pub health: Health,
    /// A hedge: a second call for the same item, sent while another was unanswered.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hedge: bool,
    /// The check the answer failed (`required_path`, `empty`, `content_policy`, `cut`,
    /// `schema`), when a check decided the outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<crate::verdict::answer_check::AnswerCheck>,
    /// The schema validator's errors, when the answer missed the schema.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<crate::verdict::answer_check::SchemaError>,
    /// The tokens the call used and their cost, where its provider has token limits or prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<crate::limits::token_limit::Used>,
    /// A continuation of a broken stream: the characters of the answer the caller had when it
    /// was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued_after_chars: Option<u64>,
    /// An input too long for the model: the model's limit and the request's size, as the vendor
    /// said them (`facts::context_limit::numbers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<crate::facts::context_limit::ContextNumbers>,
}

/// What the item went through, for its metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Report {
    pub attempts: Vec<AttemptLog>,
    pub skipped: Vec<Skip>,
    pub slept_ms: u64,
    /// How the item's route was chosen; left out for a configured order in one tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Route>,
}

/// How early a poll after a wait may come and still find the wait over.
pub const WAKE_SLACK_MS: u64 = 2;
