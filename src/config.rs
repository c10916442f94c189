//! Configuration of a fallback chain as the node hands it over, and its validation. Every
//! rejection names the field (`providers[1].threshold`), never a panic, never a silent default.
use crate::backoff::{Backoff, Strategy};
use crate::breaker::{BreakerPolicy, TripRule};
use crate::error::EngineError;
use crate::outcome::RetryRules;
use crate::rate_gate::RateLimit;
use crate::status_set::StatusSet;
use serde::{Deserialize, Serialize};

/// Node-level settings; every field has the default documented in README.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChainConfig {
    pub providers: Vec<ProviderConfig>,
    pub strategy: String,
    pub base_ms: i64,
    pub cap_ms: i64,
    pub max_attempts: i64,
    pub deadline_ms: i64,
    pub budget_ms: i64,
    pub retry_after_cap_ms: i64,
    /// Deferred items wake at the earliest admissible time plus `U(0, defer_spread_ms)`.
    pub defer_spread_ms: i64,
    pub retry_statuses: String,
    pub health_statuses: String,
    pub count_429: bool,
    pub retry_unsafe_methods: bool,
    pub trip_rule: String,
    pub failure_rate: f64,
    pub min_calls: i64,
    pub threshold: i64,
    pub window_ms: i64,
    pub open_ms: i64,
    pub open_growth: f64,
    pub open_max_ms: i64,
    pub half_open_probes: i64,
    pub successes_to_close: i64,
}

impl Default for ChainConfig {
    fn default() -> Self {
        ChainConfig {
            providers: Vec::new(),
            strategy: "full_jitter".into(),
            base_ms: 400,
            cap_ms: 20_000,
            max_attempts: 3,
            deadline_ms: 10_000,
            budget_ms: 60_000,
            retry_after_cap_ms: 60_000,
            defer_spread_ms: 10_000,
            retry_statuses: "408,425,429,500,502,503,504".into(),
            health_statuses: "408,500-599".into(),
            count_429: false,
            retry_unsafe_methods: false,
            trip_rule: "consecutive".into(),
            failure_rate: 0.5,
            min_calls: 10,
            threshold: 5,
            window_ms: 60_000,
            open_ms: 30_000,
            open_growth: 2.0,
            open_max_ms: 600_000,
            half_open_probes: 1,
            successes_to_close: 1,
        }
    }
}

/// One provider of the chain; `None` fields take the node-level value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct ProviderConfig {
    pub name: String,
    pub method: String,
    pub max_attempts: Option<i64>,
    pub deadline_ms: Option<i64>,
    pub threshold: Option<i64>,
    pub open_ms: Option<i64>,
    pub rate_limit: Option<RateLimitConfig>,
    pub max_in_flight: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitConfig {
    pub requests: i64,
    pub period_ms: i64,
    #[serde(default = "one")]
    pub burst: i64,
}

fn one() -> i64 {
    1
}

/// A validated chain: what the step machine and the simulator run on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chain {
    pub providers: Vec<Provider>,
    pub backoff: Backoff,
    pub budget_ms: u64,
    pub retry_after_cap_ms: u64,
    pub defer_spread_ms: u64,
    pub rules: RetryRules,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provider {
    pub name: String,
    pub unsafe_method: bool,
    pub max_attempts: u32,
    pub deadline_ms: u64,
    pub breaker: BreakerPolicy,
    pub rate_limit: Option<RateLimit>,
    pub max_in_flight: Option<u32>,
}

const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;
const METHODS: &[&str] = &["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "POST", "PATCH"];

fn ms(field: &str, v: i64, min: i64, max: i64) -> Result<u64, EngineError> {
    if v < min || v > max {
        return Err(EngineError::config(field, format!("must be between {min} and {max} ms, got {v}")));
    }
    Ok(v as u64)
}

fn count(field: &str, v: i64, min: i64, max: i64) -> Result<u32, EngineError> {
    if v < min || v > max {
        return Err(EngineError::config(field, format!("must be between {min} and {max}, got {v}")));
    }
    Ok(v as u32)
}

fn statuses(field: &str, v: &str) -> Result<StatusSet, EngineError> {
    v.parse().map_err(|e| EngineError::config(field, e))
}

impl ChainConfig {
    pub fn validate(&self) -> Result<Chain, EngineError> {
        let strategy = Strategy::parse(&self.strategy)?;
        let base_ms = ms("base_ms", self.base_ms, 1, HOUR)?;
        let cap_ms = ms("cap_ms", self.cap_ms, 1, DAY)?;
        if cap_ms < base_ms {
            return Err(EngineError::config("cap_ms", format!("cap {cap_ms} ms is below base {base_ms} ms")));
        }
        let trip = match self.trip_rule.as_str() {
            "consecutive" => TripRule::Consecutive,
            "failure_rate" => {
                if !(self.failure_rate > 0.0 && self.failure_rate <= 1.0) {
                    return Err(EngineError::config(
                        "failure_rate",
                        format!("must be in (0, 1], got {}", self.failure_rate),
                    ));
                }
                TripRule::FailureRate {
                    rate: self.failure_rate,
                    min_calls: count("min_calls", self.min_calls, 1, 100_000)?,
                }
            }
            other => {
                return Err(EngineError::config(
                    "trip_rule",
                    format!("unknown trip rule '{other}' (consecutive, failure_rate)"),
                ))
            }
        };
        if !(self.open_growth >= 1.0 && self.open_growth <= 100.0) {
            return Err(EngineError::config(
                "open_growth",
                format!("must be between 1 and 100, got {}", self.open_growth),
            ));
        }
        let open_ms = ms("open_ms", self.open_ms, 1, DAY)?;
        let open_max_ms = ms("open_max_ms", self.open_max_ms, 1, 7 * DAY)?;
        if open_max_ms < open_ms {
            return Err(EngineError::config("open_max_ms", format!("{open_max_ms} ms is below open_ms {open_ms} ms")));
        }
        let node_breaker = BreakerPolicy {
            trip,
            threshold: count("threshold", self.threshold, 1, 10_000)?,
            window_ms: ms("window_ms", self.window_ms, 1, DAY)?,
            open_ms,
            open_growth: self.open_growth,
            open_max_ms,
            half_open_probes: count("half_open_probes", self.half_open_probes, 0, 1000)?,
            successes_to_close: count("successes_to_close", self.successes_to_close, 1, 1000)?,
            probe_lease_ms: 0,
            probe_answer_ms: 0,
        };
        let node_attempts = count("max_attempts", self.max_attempts, 1, 100)?;
        let node_deadline = ms("deadline_ms", self.deadline_ms, 1, DAY)?;
        if self.providers.is_empty() {
            return Err(EngineError::config("providers", "the chain needs at least one provider"));
        }
        let mut providers = Vec::with_capacity(self.providers.len());
        for (i, p) in self.providers.iter().enumerate() {
            providers.push(p.validate(i, &node_breaker, node_attempts, node_deadline, &providers)?);
        }
        Ok(Chain {
            providers,
            backoff: Backoff { strategy, base_ms, cap_ms },
            budget_ms: ms("budget_ms", self.budget_ms, 1, 7 * DAY)?,
            retry_after_cap_ms: ms("retry_after_cap_ms", self.retry_after_cap_ms, 0, DAY)?,
            defer_spread_ms: ms("defer_spread_ms", self.defer_spread_ms, 0, DAY)?,
            rules: RetryRules {
                retry_statuses: statuses("retry_statuses", &self.retry_statuses)?,
                health_statuses: statuses("health_statuses", &self.health_statuses)?,
                count_429: self.count_429,
                retry_unsafe_methods: self.retry_unsafe_methods,
            },
        })
    }
}

impl ProviderConfig {
    fn validate(
        &self,
        i: usize,
        node: &BreakerPolicy,
        attempts: u32,
        deadline: u64,
        before: &[Provider],
    ) -> Result<Provider, EngineError> {
        let f = |name: &str| format!("providers[{i}].{name}");
        let name = self.name.trim();
        if name.is_empty() || name.len() > 200 {
            return Err(EngineError::config(f("name"), "must be 1 to 200 characters"));
        }
        if before.iter().any(|p| p.name == name) {
            return Err(EngineError::config(f("name"), format!("'{name}' appears twice in the chain")));
        }
        let method = if self.method.is_empty() { "GET".to_string() } else { self.method.to_ascii_uppercase() };
        if !METHODS.contains(&method.as_str()) {
            return Err(EngineError::config(f("method"), format!("unsupported method '{}'", self.method)));
        }
        let deadline_ms = match self.deadline_ms {
            Some(v) => ms(&f("deadline_ms"), v, 1, DAY)?,
            None => deadline,
        };
        let mut breaker = node.clone();
        if let Some(t) = self.threshold {
            breaker.threshold = count(&f("threshold"), t, 1, 10_000)?;
        }
        if let Some(o) = self.open_ms {
            breaker.open_ms = ms(&f("open_ms"), o, 1, DAY)?;
            breaker.open_max_ms = breaker.open_max_ms.max(breaker.open_ms);
        }
        // A probe's lease outlives its call by a margin, so only a dead holder lets it lapse.
        breaker.probe_lease_ms = deadline_ms.saturating_mul(2).max(deadline_ms + 5_000);
        breaker.probe_answer_ms = deadline_ms;
        let rate_limit = match &self.rate_limit {
            None => None,
            Some(r) => Some(RateLimit {
                requests: count(&f("rate_limit.requests"), r.requests, 1, 1_000_000)?,
                period_ms: ms(&f("rate_limit.period_ms"), r.period_ms, 1, DAY)?,
                burst: count(&f("rate_limit.burst"), r.burst, 1, 1_000_000)?,
            }),
        };
        Ok(Provider {
            name: name.to_string(),
            unsafe_method: method == "POST" || method == "PATCH",
            max_attempts: match self.max_attempts {
                Some(v) => count(&f("max_attempts"), v, 1, 100)?,
                None => attempts,
            },
            deadline_ms,
            breaker,
            rate_limit,
            max_in_flight: self.max_in_flight.map(|v| count(&f("max_in_flight"), v, 1, 100_000)).transpose()?,
        })
    }
}
