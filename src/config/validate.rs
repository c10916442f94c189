//! Checking a chain's configuration against its documented ranges, and resolving what its node
//! version leaves unset: `ChainConfig::validate` turns the node's description into the `Chain`
//! the engine runs. A bad value is `invalid_config` naming the field.
use super::*;
use crate::limits::key_quota::{Measure, Per, Quota};
use key_quotas::{KeyQuotaConfig, KeyQuotas};

/// The most hedges an item may send beside its call.
pub const MAX_HEDGES: i64 = 3;
/// [`ChainConfig::priority`]'s values, by rank.
pub const PRIORITIES: &str = "low, normal, high";

/// The longest wait for a slot of a provider's fleet limit ([`ChainConfig::wait_for_slot`]).
pub const MAX_SLOT_WAIT_MS: u64 = 15_000;

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

/// `v` ms at least `floor` ms (`other`'s), else the error naming `field`, its value said after
/// `prefix`.
fn not_below(field: &str, prefix: &str, v: u64, other: &str, floor: u64) -> Result<(), EngineError> {
    match v < floor {
        true => Err(EngineError::config(field, format!("{prefix}{v} ms is below {other} {floor} ms"))),
        false => Ok(()),
    }
}

/// `v` within `min..=max`, else the error naming `field` (one message for every such number).
fn between(field: String, v: f64, min: i64, max: i64) -> Result<f64, EngineError> {
    if v >= min as f64 && v <= max as f64 {
        return Ok(v);
    }
    Err(EngineError::config(field, format!("must be between {min} and {max}, got {}", decimal(v))))
}

/// A number for an error message, to 3 decimals. Formatting an f64 with `{}` would pull core's
/// float printing (~20 KB) into the WASM engine for two messages.
fn decimal(v: f64) -> String {
    if !v.is_finite() || v.abs() >= 1e15 {
        return if v.is_nan() {
            "NaN".into()
        } else if v > 0.0 {
            "a huge number".into()
        } else {
            "a huge negative number".into()
        };
    }
    let milli = (v.abs() * 1000.0).round() as u64;
    let (int, frac) = (milli / 1000, milli % 1000);
    let sign = if v < 0.0 && milli > 0 { "-" } else { "" };
    if frac == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{}", format!("{frac:03}").trim_end_matches('0'))
    }
}

fn statuses(field: &str, v: &str) -> Result<StatusSet, EngineError> {
    v.parse().map_err(|e| EngineError::config(field, e))
}

impl ChainConfig {
    pub fn validate(&self) -> Result<Chain, EngineError> {
        let d = versions::of(&self.node, self.type_version)?;
        let strategy = Strategy::parse(&self.strategy)?;
        let base_ms = ms("base_ms", self.base_ms, 1, HOUR)?;
        let cap_ms = ms("cap_ms", self.cap_ms, 1, DAY)?;
        not_below("cap_ms", "cap ", cap_ms, "base", base_ms)?;
        let trip = match crate::error::one_of("trip_rule", "trip rule", &self.trip_rule, "consecutive, failure_rate")? {
            0 => TripRule::Consecutive,
            _ => {
                if !(self.failure_rate > 0.0 && self.failure_rate <= 1.0) {
                    return Err(EngineError::config(
                        "failure_rate",
                        format!("must be in (0, 1], got {}", decimal(self.failure_rate)),
                    ));
                }
                TripRule::FailureRate {
                    rate: self.failure_rate,
                    min_calls: count("min_calls", self.min_calls, 1, 100_000)?,
                }
            }
        };
        between("open_growth".into(), self.open_growth, 1, 100)?;
        let open_ms = ms("open_ms", self.open_ms, 1, DAY)?;
        let open_max_ms = ms("open_max_ms", self.open_max_ms, 1, 7 * DAY)?;
        not_below("open_max_ms", "", open_max_ms, "open_ms", open_ms)?;
        let node_breaker = BreakerPolicy {
            trip,
            threshold: count("threshold", self.threshold, 1, 10_000)?,
            window_ms: ms("window_ms", self.window_ms, 1, DAY)?,
            open_ms,
            open_growth: self.open_growth,
            open_max_ms,
            probe_interval_ms: match self.probe_interval_ms.unwrap_or(d.probe_interval_ms as i64) {
                0 => 0,
                v => ms("probe_interval_ms", v, 1_000, DAY)?,
            },
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
        let stream = if self.streams { Some(self.stream_limits(&providers, &d)?) } else { None };
        let routing = Routing::ALL[crate::error::one_of("routing", "routing", &self.routing, Routing::NAMES)?];
        let percent = count("retry_budget_percent", self.retry_budget_percent, 0, 1_000)?;
        let retry_budget = (percent > 0)
            .then(|| -> Result<RetryBudget, EngineError> {
                Ok(RetryBudget {
                    percent,
                    floor_per_s: count("retry_budget_floor_per_s", self.retry_budget_floor_per_s, 0, 1_000_000)?,
                    window_ms: ms("retry_budget_window_ms", self.retry_budget_window_ms, 1_000, HOUR)?,
                })
            })
            .transpose()?;
        let hedge = self.hedge()?;
        let rank =
            crate::error::one_of("priority", "priority", self.priority.as_deref().unwrap_or(d.priority), PRIORITIES)?
                as u8;
        let (share_key, share_weight) = self.share_key(&d)?;
        // Check Provider's ticket carries no quota hold and its Report reads no key's row: refused, not
        // counted half.
        if self.node == "guard" && !self.key_quotas.is_empty() {
            return Err(EngineError::config("key_quotas", "Check Provider and Report Outcome do not count Key Quotas"));
        }
        let quotas = key_quotas(&self.key_quotas, &share_key, &mut providers)?;
        let budget_ms = ms("budget_ms", self.budget_ms, 1, 7 * DAY)?;
        Ok(Chain {
            hedge,
            retry_budget,
            routing,
            stream,
            providers,
            backoff: Backoff { strategy, base_ms, cap_ms },
            budget_ms,
            retry_after_cap_ms: ms("retry_after_cap_ms", self.retry_after_cap_ms, 0, DAY)?,
            defer_spread_ms: ms("defer_spread_ms", self.defer_spread_ms, 0, DAY)?,
            rules: RetryRules {
                retry_statuses: statuses("retry_statuses", &self.retry_statuses)?,
                health_statuses: statuses("health_statuses", &self.health_statuses)?,
                count_429: self.count_429,
                retry_unsafe_methods: self.retry_unsafe_methods,
                count_answer_misses: self.count_answer_misses,
                answer_checks: AnswerChecks { empty: self.check_empty, finish: self.check_finish },
            },
            next_provider_when_input_too_long: self
                .next_provider_when_input_too_long
                .unwrap_or(d.next_provider_when_input_too_long),
            next_provider_on_client_error: self.next_provider_on_client_error,
            fail_over_first: self.fail_over_first,
            wait_in_line: self.wait_in_line.unwrap_or(d.wait_in_line),
            // A quarter of the item's budget, as API Priority and Fairness bounds a queued
            // request by a quarter of its deadline, and 15 s at most (its wait without one).
            slot_wait_ms: if self.wait_for_slot.unwrap_or(d.wait_for_slot) {
                (budget_ms / 4).min(MAX_SLOT_WAIT_MS)
            } else {
                0
            },
            fleet_limit: self.fleet_limit.unwrap_or(d.fleet_limit),
            rank,
            share_key,
            share_weight,
            quotas,
            continue_broken_streams: self.continue_broken_streams.unwrap_or(d.continue_broken_streams),
        })
    }

    /// [`ChainConfig::fair_share_key`] and [`ChainConfig::fair_share_weight`], checked; with no
    /// key, `workflow:<id>` where the version shares by workflow and the workflow is known.
    fn share_key(&self, d: &VersionDefaults) -> Result<(String, u32), EngineError> {
        let weight = count("fair_share_weight", self.fair_share_weight, 1, MAX_SHARE_WEIGHT)?;
        if self.fair_share_key.len() > MAX_SHARE_KEY_BYTES {
            return Err(EngineError::config("fair_share_key", "at most 200 bytes"));
        }
        let by_workflow = self.fair_share_key.is_empty() && d.fair_share_by_workflow && !self.workflow_id.is_empty();
        Ok((if by_workflow { format!("workflow:{}", self.workflow_id) } else { self.fair_share_key.clone() }, weight))
    }
}

/// A fair-share key's weight at most (a key at 1000 beside one at 1 takes all but a call in a
/// thousand).
const MAX_SHARE_WEIGHT: i64 = 1_000;
/// A fair-share key's length at most: it is written into every share of the limit's row.
const MAX_SHARE_KEY_BYTES: usize = 200;

impl ChainConfig {
    fn hedge(&self) -> Result<Option<Hedge>, EngineError> {
        let delay = match crate::error::one_of("hedge", "hedging", &self.hedge, "off, fixed, p95")? {
            0 => return Ok(None),
            1 => HedgeDelay::Fixed { ms: ms("hedge_delay_ms", self.hedge_delay_ms, 1, HOUR)? },
            _ => {
                let min_ms = ms("hedge_min_ms", self.hedge_min_ms, 1, HOUR)?;
                let max_ms = ms("hedge_max_ms", self.hedge_max_ms, 1, HOUR)?;
                not_below("hedge_max_ms", "", max_ms, "hedge_min_ms", min_ms)?;
                HedgeDelay::P95 { min_ms, max_ms }
            }
        };
        Ok(Some(Hedge { delay, max_hedges: count("max_hedges", self.max_hedges, 1, MAX_HEDGES)? }))
    }

    fn stream_limits(&self, providers: &[Provider], d: &VersionDefaults) -> Result<StreamLimits, EngineError> {
        let first_chunk_ms = ms("first_chunk_deadline_ms", self.first_chunk_deadline_ms, 1, DAY)?;
        if let Some(p) = providers.iter().find(|p| first_chunk_ms >= p.deadline_ms) {
            return Err(EngineError::config(
                "first_chunk_deadline_ms",
                format!(
                    "{first_chunk_ms} ms must be below the per-attempt deadline ({} ms for '{}')",
                    p.deadline_ms, p.name
                ),
            ));
        }
        Ok(StreamLimits {
            first_chunk_ms,
            idle_ms: ms("stream_idle_ms", self.stream_idle_ms, 1, DAY)?,
            learn_pace: self.learn_stream_pace.unwrap_or(d.learn_stream_pace),
        })
    }
}

impl TokenLimitConfig {
    /// The rules, or `None` when it limits nothing and prices nothing.
    fn validate(&self, f: &dyn Fn(&str) -> String) -> Result<Option<TokenRules>, EngineError> {
        let money = |name: &str, v: f64| between(f(&format!("token_limit.{name}")), v, 0, 1_000_000_000);
        let per_minute = |name: &str, v: i64| match v {
            0 => Ok(None),
            v => count(&f(&format!("token_limit.{name}")), v, 1, 1_000_000_000).map(|n| Some(u64::from(n))),
        };
        let input_per_minute = per_minute("input_tokens_per_minute", self.input_tokens_per_minute)?;
        let output_per_minute = per_minute("output_tokens_per_minute", self.output_tokens_per_minute)?;
        let per_minute = per_minute("tokens_per_minute", self.tokens_per_minute)?;
        let output_reserve = match self.output_reserve {
            0 => DEFAULT_OUTPUT_RESERVE,
            v => u64::from(count(&f("token_limit.output_reserve"), v, 1, 10_000_000)?),
        };
        let cap = money("spend_cap", self.spend_cap)?;
        let prices = Prices {
            input: money("price_input", self.price_input)?,
            output: money("price_output", self.price_output)?,
            cached_input: money("price_cached_input", self.price_cached_input)?,
            reasoning: money("price_reasoning", self.price_reasoning)?,
            cache_write: money("price_cache_write", self.price_cache_write)?,
        };
        let priced = prices.input > 0.0 || prices.output > 0.0;
        if cap > 0.0 && !priced {
            return Err(EngineError::config(
                f("token_limit.spend_cap"),
                "needs the prices of input or output tokens: without them nothing is spent",
            ));
        }
        let limits = Limits {
            per_minute,
            input_per_minute,
            output_per_minute,
            spend_cap_micros: (cap > 0.0).then(|| (cap * 1e6).round() as u64),
            period: self.spend_period,
        };
        Ok((limits.limits_minute() || priced).then_some(TokenRules { limits, output_reserve, prices }))
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
            unsafe_method: !self.idempotent && (method == "POST" || method == "PATCH"),
            repairs: self.repairs,
            max_attempts: match self.max_attempts {
                Some(v) => count(&f("max_attempts"), v, 1, 100)?,
                None => attempts,
            },
            deadline_ms,
            breaker,
            rate_limit,
            max_in_flight: self.max_in_flight.map(|v| count(&f("max_in_flight"), v, 1, 100_000)).transpose()?,
            tier: self.tier.map(|v| count(&f("tier"), v, 1, 100)).transpose()?.unwrap_or(DEFAULT_TIER),
            weight: self.weight.map_or(Ok(DEFAULT_WEIGHT), |w| between(f("weight"), w, 0, 1_000_000))?,
            tokens: self.token_limit.as_ref().map(|t| t.validate(&f)).transpose()?.flatten(),
        })
    }
}

#[cfg(test)]
mod decimal_tests {
    #[test]
    fn numbers_in_messages_read_as_written() {
        for (v, text) in
            [(0.5, "0.5"), (2.0, "2"), (-3.25, "-3.25"), (1.0005, "1.001"), (f64::NAN, "NaN"), (1e300, "a huge number")]
        {
            assert_eq!(super::decimal(v), text);
        }
    }
}

#[cfg(test)]
mod idempotent_tests {
    use super::*;

    fn provider(method: &str, idempotent: bool) -> Provider {
        let p = ProviderConfig { name: "m".into(), method: method.into(), idempotent, ..Default::default() };
        let chain = ChainConfig { providers: vec![p], ..Default::default() };
        chain.validate().unwrap().providers.remove(0)
    }

    #[test]
    fn a_call_that_says_it_is_idempotent_is_safe_to_repeat_whatever_its_method() {
        assert!(provider("POST", false).unsafe_method);
        assert!(!provider("POST", true).unsafe_method, "a model call: safe because it says so");
        assert!(!provider("GET", false).unsafe_method);
    }
}

/// The most quotas a key may have: each is counted in its row on every call.
const MAX_QUOTAS: usize = 9;

/// The quotas checked; a chain counting tokens or spend against them estimates every provider's
/// calls (a provider without token limits reserves its calls' estimate at no price).
fn key_quotas(
    list: &[KeyQuotaConfig],
    share_key: &str,
    providers: &mut [Provider],
) -> Result<Option<KeyQuotas>, EngineError> {
    if list.is_empty() {
        return Ok(None);
    }
    if share_key.is_empty() {
        return Err(EngineError::config(
            "key_quotas",
            "count under a key: set a Fair Share Key (Call Chain 2.2 and the chat model 1.2 count by workflow without one)",
        ));
    }
    let mut out: Vec<Quota> = Vec::with_capacity(list.len());
    for (i, q) in list.iter().enumerate() {
        // One message for every way an entry is wrong (each message costs the WASM engine).
        let bad = || {
            EngineError::config(
                "key_quotas",
                format!(
                    "quota {} needs a measure (requests, tokens, spend), a period (minute, day, month) and a limit \
                 above 0 and at most 10^12 (whole for requests and tokens); each measure and period once \
                 (9 quotas at most)",
                    i + 1
                ),
            )
        };
        let pick = |v: &str, words: [&str; 3]| words.iter().position(|w| *w == v).ok_or_else(bad);
        let measure =
            [Measure::Requests, Measure::Tokens, Measure::Spend][pick(&q.measure, ["requests", "tokens", "spend"])?];
        let per = [Per::Minute, Per::Day, Per::Month][pick(&q.per, ["minute", "day", "month"])?];
        let whole = measure != Measure::Spend;
        let repeated = out.iter().any(|o| o.measure == measure && o.per == per);
        if !(q.limit > 0.0 && q.limit <= 1e12) || (whole && q.limit.fract() != 0.0) || repeated || i >= MAX_QUOTAS {
            return Err(bad());
        }
        let scale = if whole { 1.0 } else { 1e6 };
        out.push(Quota { measure, per, limit: (q.limit * scale).round() as u64 });
    }
    if out.iter().any(|q| q.measure != Measure::Requests) {
        for p in providers.iter_mut().filter(|p| p.tokens.is_none()) {
            p.tokens = Some(TokenRules {
                limits: Limits::default(),
                output_reserve: DEFAULT_OUTPUT_RESERVE,
                prices: Prices::default(),
            });
        }
    }
    Ok(Some(KeyQuotas { owner: format!("key:{share_key}"), list: out }))
}
