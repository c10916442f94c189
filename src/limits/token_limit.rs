//! A provider's limits in tokens and money (`token_limit`), shared by the fleet in a row of its
//! own (`tokens`): before a call, a spend cap reached for the period (a UTC day or month) skips
//! the provider until the period ends, and the call's estimate is reserved against the tokens
//! per minute ([`crate::limits::token_budget`]); at its end the call settles at the usage its answer
//! reported (at its estimate when none came), its cost is added to the period's spend, and the
//! vendor's remaining-token count corrects the window.
//!
//! A spend cap bounds what calls *start*: each call holds its estimated cost against the cap while
//! it is out ([`crate::limits::spend_hold`]), so the calls out at once cannot together pass it; the last
//! call admitted below the cap may pass it by its cost (more where it costs more than its
//! estimate).
use crate::facts::civil::{civil_from_days, days_from_civil};
use crate::facts::hint_parse::{parse_duration, parse_rfc3339};
use crate::facts::retry_after::HintHeaders;
use crate::limits::key_quota::Hold;
use crate::limits::spend_hold::{self, SpendRow};
use crate::limits::token_budget::{self, Estimate, Limits, Reserve, TokenRow, Window};
use crate::verdict::reason::Reason;
use serde::{Deserialize, Serialize};

pub const DAY_MS: u64 = 86_400_000;

/// The output tokens reserved for a call whose request sets no maximum.
pub const DEFAULT_OUTPUT_RESERVE: u64 = 1_000;

/// The headers a vendor says its remaining tokens in, each with the header of when that minute is
/// full again: the total (OpenAI and Groq, a Go duration; Anthropic's total, an RFC 3339 time),
/// the input and the output (Anthropic's, whose limits are per direction).
const OPENAI_TOTAL: (&str, &str) = ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens");
const ANTHROPIC_TOTAL: (&str, &str) = ("anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset");
const ANTHROPIC_INPUT: (&str, &str) =
    ("anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset");
const ANTHROPIC_OUTPUT: (&str, &str) =
    ("anthropic-ratelimit-output-tokens-remaining", "anthropic-ratelimit-output-tokens-reset");

pub use crate::limits::token_budget::Period;

/// Prices per million tokens, in the user's currency unit; 0 is unpriced (cached input at the
/// input price, reasoning at the output price, a cache write at 1.25x the input price: what
/// Anthropic bills a write to its 5-minute cache, and more than plain input wherever writes are
/// billed).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cached_input: f64,
    pub reasoning: f64,
    pub cache_write: f64,
}

/// A cache write's price per input price where the provider sets none (Anthropic's 5-minute cache).
const CACHE_WRITE_PER_INPUT: f64 = 1.25;

/// A provider's validated token and spend limits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TokenRules {
    /// Tokens per minute and the spend cap: what the provider's `tokens` row records it was
    /// written under, for Get Provider State.
    pub limits: Limits,
    /// Output tokens reserved for a call whose request sets no maximum.
    pub output_reserve: u64,
    pub prices: Prices,
}

/// What an item's request is, for its estimate: counted by the model's tokenizer (`counted`), or
/// its characters (`cjk_chars` of them in CJK scripts); the output maximum it asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TokenFacts {
    pub counted: Option<u64>,
    pub chars: u64,
    pub cjk_chars: u64,
    pub max_output: Option<u64>,
}

/// The usage an answer reported. `output` includes the reasoning tokens (the node adds Gemini's
/// `thoughtsTokenCount`, which it reports apart); `cached_input` (read from the vendor's cache)
/// and `cache_write` (written to it: Anthropic's `cache_creation_input_tokens`) are parts of
/// `input`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    #[serde(default)]
    pub cached_input: u64,
    #[serde(default)]
    pub reasoning: u64,
    #[serde(default)]
    pub cache_write: u64,
}

/// A call's reservation: when (its bucket) and how many tokens in each window (the total, the
/// input and the output; 0 in a window the provider does not keep), of its estimate (input,
/// output).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reservation {
    pub at_ms: u64,
    pub tokens: u64,
    pub input: u64,
    pub output: u64,
    pub estimate: (u64, u64),
    /// Its estimated cost held against the spend cap (`spend_hold`), released at its end.
    #[serde(default)]
    pub held_micros: u64,
    /// What it holds against its key's quotas (`key_quota`), released at its end.
    #[serde(default, skip_serializing_if = "is_default")]
    pub quota: Hold,
}

fn is_default(h: &Hold) -> bool {
    *h == Hold::default()
}

/// What a vendor said is left of one of its minutes, and when that minute is full again (the
/// store's clock), where it said so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VendorCount {
    pub left: u64,
    pub full_at_ms: Option<u64>,
}

/// What the vendor said is left of its minute, per window, where its headers said so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Remaining {
    pub total: Option<VendorCount>,
    pub input: Option<VendorCount>,
    pub output: Option<VendorCount>,
}

/// The lower of two counts (the tighter minute).
fn lower(a: Option<VendorCount>, b: Option<VendorCount>) -> Option<VendorCount> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.left < x.left { y } else { x }),
        (x, y) => x.or(y),
    }
}

/// What a call used, as settled: the run data's `tokens` and the counters'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Used {
    pub input: u64,
    pub output: u64,
    /// No usage came with the call's end: its estimate stands.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
    /// Its cost in millionths of the user's currency unit (0 unpriced).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cost_micros: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How a call ended, for its settlement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settle {
    pub reservation: Reservation,
    pub used: Used,
    /// The vendor's remaining tokens in its minute, where its headers said so.
    pub remaining: Remaining,
}

/// The row's three windows with the limit each is kept for (`u64::MAX`: counted, not limited);
/// `None`: not kept.
type Windows<'a> = [(&'a mut Window, Option<u64>); 3];

impl Limits {
    /// Whether any tokens per minute are limited (the row's windows are kept).
    pub fn limits_minute(&self) -> bool {
        self.per_minute.or(self.input_per_minute).or(self.output_per_minute).is_some()
    }

    /// The row's windows and their limits: the total is kept whenever any is limited.
    fn windows<'a>(&self, row: &'a mut TokenRow) -> Windows<'a> {
        let total = self.limits_minute().then(|| self.per_minute.unwrap_or(u64::MAX));
        [
            (&mut row.buckets, total),
            (&mut row.input_buckets, self.input_per_minute),
            (&mut row.output_buckets, self.output_per_minute),
        ]
    }

    /// The start and end of the period `now` is in (UTC).
    pub fn period(&self, now: u64) -> (u64, u64) {
        match self.period {
            Period::Day => {
                let start = now - now % DAY_MS;
                (start, start.saturating_add(DAY_MS))
            }
            Period::Month => {
                let (y, m, _) = civil_from_days((now / DAY_MS) as i64);
                let next = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
                let ms = |(y, m)| (days_from_civil(y, m, 1) as u64).saturating_mul(DAY_MS);
                (ms((y, m)), ms(next))
            }
        }
    }

    /// Spent in the period `now` is in.
    pub fn spent(&self, row: &TokenRow, now: u64) -> u64 {
        if row.period_start_ms == self.period(now).0 {
            row.spent_micros
        } else {
            0
        }
    }
}

impl TokenRules {
    /// The estimate of a call with `facts` (none given: no input counted, the output reserve).
    pub fn estimate(&self, facts: Option<&TokenFacts>) -> Estimate {
        let f = facts.copied().unwrap_or_default();
        Estimate {
            input: token_budget::input_tokens(f.counted, f.chars - f.cjk_chars.min(f.chars), f.cjk_chars),
            max_output: f.max_output.unwrap_or(self.output_reserve),
        }
    }

    /// What `usage` costs, in millionths of the unit (price per million x tokens). Not inlined:
    /// its float arithmetic would be copied into each limit that prices a call.
    #[inline(never)]
    pub fn cost_micros(&self, u: &Usage) -> u64 {
        let p = &self.prices;
        let or = |price: f64, fallback: f64| if price > 0.0 { price } else { fallback };
        let cached = u.cached_input.min(u.input);
        let written = u.cache_write.min(u.input - cached);
        let reasoning = u.reasoning.min(u.output);
        let micros = (u.input - cached - written) as f64 * p.input
            + cached as f64 * or(p.cached_input, p.input)
            + written as f64 * or(p.cache_write, p.input * CACHE_WRITE_PER_INPUT)
            + (u.output - reasoning) as f64 * p.output
            + reasoning as f64 * or(p.reasoning, p.output);
        micros.round() as u64
    }
}

/// The provider's spend holds, and how long a call's would last unreleased (its lease).
#[derive(Debug, Clone, Copy)]
pub struct SpendHolds<'a> {
    pub row: &'a SpendRow,
    pub lease_ms: u64,
}

/// Whether a call may start now, and the row to write if so. Made and taken apart at once, once
/// per call: the row goes into the writes as it is, unboxed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
pub enum Take {
    /// Go: write `row` (none when the provider has no tokens per minute: nothing to reserve) and
    /// `spend` (its cost held, where it has a spend cap and prices).
    Granted { row: Option<TokenRow>, spend: Option<SpendRow>, reservation: Reservation },
    /// No room until `until_ms`: `TokenLimited` (the minute's window) or `SpendCap` (the period).
    Full { until_ms: u64, reason: Reason },
}

/// A call with `estimate` to a provider with `rules`, on its row at `now`: it goes when every
/// window the provider limits has room for its part (the total its estimate, the input window
/// its input, the output window its maximum output). A call larger than a whole window reserves
/// the whole window: it goes alone, once that window is empty.
pub fn take(row: &TokenRow, rules: &TokenRules, estimate: Estimate, held: SpendHolds, now: u64) -> Take {
    let l = &rules.limits;
    let pair = (estimate.input, estimate.max_output);
    let mut spend = None;
    let mut held_micros = 0;
    if let Some(cap) = l.spend_cap_micros {
        let spent = l.spent(row, now);
        if spent >= cap {
            return Take::Full { until_ms: l.period(now).1, reason: Reason::SpendCap };
        }
        // The calls out hold the rest: look again soon, their answers release it.
        if spent.saturating_add(spend_hold::held(held.row, now)) >= cap {
            return Take::Full { until_ms: now.saturating_add(spend_hold::RECHECK_MS), reason: Reason::SpendCap };
        }
        held_micros = rules.cost_micros(&Usage { input: pair.0, output: pair.1, ..Usage::default() });
        if held_micros > 0 {
            spend = Some(spend_hold::hold(held.row, held_micros, now.saturating_add(held.lease_ms), now));
        }
    }
    if !l.limits_minute() {
        let reservation = Reservation {
            at_ms: now,
            tokens: 0,
            input: 0,
            output: 0,
            estimate: pair,
            held_micros,
            quota: Hold::default(),
        };
        return Take::Granted { row: None, spend, reservation };
    }
    let mut next = row.clone();
    let needs = [estimate.tokens(), estimate.input, estimate.max_output];
    let mut reserved = [0u64; 3];
    let mut until_ms = None;
    for (k, (window, limit)) in l.windows(&mut next).into_iter().enumerate() {
        let Some(limit) = limit else { continue };
        reserved[k] = needs[k].min(limit);
        match token_budget::reserve(window, limit, reserved[k], now) {
            Reserve::Granted { window: w } => *window = w,
            Reserve::Wait { until_ms: t } => until_ms = until_ms.max(Some(t)),
        }
    }
    if let Some(until_ms) = until_ms {
        return Take::Full { until_ms, reason: Reason::TokenLimited };
    }
    let [tokens, input, output] = reserved;
    let reservation =
        Reservation { at_ms: now, tokens, input, output, estimate: pair, held_micros, quota: Hold::default() };
    let row = TokenRow { limits: Some(*l), version: row.version.wrapping_add(1), ..next };
    Take::Granted { row: Some(row), spend, reservation }
}

/// What a call used: its `usage` as reported; a call the vendor refused with a status (it
/// answered, and processed nothing) used none; any other end without usage (an abort, a lost
/// hedge, a broken stream, a network error) used its estimate, flagged.
pub fn used(rules: &TokenRules, r: &Reservation, usage: Option<&Usage>, refused: bool) -> Used {
    let (usage, estimated) = match (usage, refused) {
        (Some(u), _) => (*u, false),
        (None, true) => (Usage::default(), false),
        (None, false) => (Usage { input: r.estimate.0, output: r.estimate.1, ..Default::default() }, true),
    };
    Used { input: usage.input, output: usage.output, estimated, cost_micros: rules.cost_micros(&usage) }
}

/// The vendor's remaining tokens at `now`, where its headers say so: the lowest total given, the
/// input and the output, each with when its minute is full again.
pub fn remaining(headers: &HintHeaders, now: u64) -> Remaining {
    // `rfc3339`: the reset is a time (Anthropic's), else a Go duration (OpenAI's and Groq's).
    let count = |(left, reset): (&str, &str), rfc3339: bool| {
        let left = headers.get(left)?.trim().parse::<u64>().ok()?;
        let until = headers.get(reset).and_then(|v| if rfc3339 { parse_rfc3339(v, now) } else { parse_duration(v) });
        Some(VendorCount { left, full_at_ms: until.map(|ms| now.saturating_add(ms)) })
    };
    Remaining {
        total: lower(count(OPENAI_TOTAL, false), count(ANTHROPIC_TOTAL, true)),
        input: count(ANTHROPIC_INPUT, true),
        output: count(ANTHROPIC_OUTPUT, true),
    }
}

/// The row once the call settled: each window's bucket at what it used, its cost added to the
/// period's spend, each window corrected by the vendor's count for it (the input's count corrects
/// the total where the input is not limited apart, as Anthropic's is the one it sends most).
/// `None`: nothing changed.
pub fn settle(row: &TokenRow, rules: &TokenRules, s: &Settle, now: u64) -> Option<TokenRow> {
    let mut next = row.clone();
    let mut changed = false;
    let r = &s.reservation;
    let l = &rules.limits;
    let total_left = match l.input_per_minute {
        Some(_) => s.remaining.total,
        None => lower(s.remaining.total, s.remaining.input),
    };
    let parts = [
        (r.tokens, s.used.input + s.used.output, total_left),
        (r.input, s.used.input, s.remaining.input),
        (r.output, s.used.output, s.remaining.output),
    ];
    for ((window, limit), (reserved, used, left)) in l.windows(&mut next).into_iter().zip(parts) {
        let Some(limit) = limit else { continue };
        if let Some(w) = token_budget::settle(window, r.at_ms, reserved, used.min(limit), now) {
            *window = w;
            changed = true;
        }
        // Only a limit the user set is the vendor's minute: a window kept to count has no wall.
        let vendor = left.filter(|_| limit < u64::MAX);
        if let Some(w) = vendor.and_then(|c| token_budget::correct(window, limit, c.left, c.full_at_ms, now)) {
            *window = w;
            changed = true;
        }
    }
    if s.used.cost_micros > 0 {
        let (start, _) = l.period(now);
        if next.period_start_ms != start {
            next.period_start_ms = start;
            next.spent_micros = 0;
        }
        next.spent_micros = next.spent_micros.saturating_add(s.used.cost_micros);
        changed = true;
    }
    changed.then(|| TokenRow { limits: Some(*l), version: row.version.wrapping_add(1), ..next })
}

/// What is left of a provider's limits (Get Provider State), where limited: tokens in the
/// minute (the total, the input, the output) and spend in the period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Left {
    pub tokens: Option<u64>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub spend_micros: Option<u64>,
}

pub fn left(row: &TokenRow, limits: &Limits, now: u64) -> Left {
    let of = |w: &Window, limit: Option<u64>| limit.map(|l| l.saturating_sub(token_budget::used(w, now)));
    Left {
        tokens: of(&row.buckets, limits.per_minute),
        input_tokens: of(&row.input_buckets, limits.input_per_minute),
        output_tokens: of(&row.output_buckets, limits.output_per_minute),
        spend_micros: limits.spend_cap_micros.map(|cap| cap.saturating_sub(limits.spent(row, now))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static NO_HOLDS: SpendRow = SpendRow { held: Vec::new(), version: 0 };

    /// No call out holds any of a spend cap.
    fn free() -> SpendHolds<'static> {
        SpendHolds { row: &NO_HOLDS, lease_ms: 60_000 }
    }

    const LIMITS: Limits = Limits {
        per_minute: Some(10_000),
        input_per_minute: None,
        output_per_minute: None,
        spend_cap_micros: None,
        period: Period::Day,
    };
    const RULES: TokenRules = TokenRules {
        limits: LIMITS,
        output_reserve: DEFAULT_OUTPUT_RESERVE,
        prices: Prices { input: 2.0, output: 8.0, cached_input: 0.5, reasoning: 0.0, cache_write: 0.0 },
    };

    fn granted(t: Take) -> (Option<TokenRow>, Reservation) {
        match t {
            Take::Granted { row, reservation, .. } => (row, reservation),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn anthropic_prompt_caching_is_priced_as_anthropic_bills_it() {
        // Claude Sonnet's prices: 3 in, 15 out, a cache read 0.30, a 5-minute cache write 3.75.
        let priced = |cached_input, cache_write| TokenRules {
            prices: Prices { input: 3.0, output: 15.0, cached_input, reasoning: 0.0, cache_write },
            ..RULES
        };
        // 100 plain input tokens, 2000 written to the cache, 5000 read from it, 200 out.
        let usage = Usage { input: 7_100, output: 200, cached_input: 5_000, cache_write: 2_000, reasoning: 0 };
        let billed = 100.0 * 3.0 + 2_000.0 * 3.75 + 5_000.0 * 0.3 + 200.0 * 15.0;
        assert_eq!(priced(0.3, 3.75).cost_micros(&usage), billed as u64);
        // Unpriced, a write costs 1.25x input (never less than plain input), a read the input price.
        let unpriced = 100.0 * 3.0 + 2_000.0 * 3.75 + 5_000.0 * 3.0 + 200.0 * 15.0;
        assert_eq!(priced(0.0, 0.0).cost_micros(&usage), unpriced as u64);
    }

    #[test]
    fn a_call_reserves_its_estimate_and_settles_at_its_reported_usage() {
        let facts = TokenFacts { chars: 8_000, max_output: Some(500), ..Default::default() };
        let e = RULES.estimate(Some(&facts));
        assert_eq!((e.input, e.max_output), (2_500, 500), "2000 tokens and a quarter; the asked maximum");
        let (row, r) = granted(take(&TokenRow::default(), &RULES, e, free(), 1_000));
        let row = row.unwrap();
        assert_eq!(token_budget::used(&row.buckets, 1_000), 3_000);
        let usage = Usage { input: 2_100, output: 300, cached_input: 100, ..Usage::default() };
        let u = used(&RULES, &r, Some(&usage), false);
        assert_eq!(u.cost_micros, 2_000 * 2 + 100 / 2 + 300 * 8, "uncached, cached and output at their prices");
        let s = Settle { reservation: r, used: u, remaining: Remaining::default() };
        let row = settle(&row, &RULES, &s, 2_000).unwrap();
        assert_eq!(token_budget::used(&row.buckets, 2_000), 2_400);
        assert_eq!(row.spent_micros, 6_450);
    }

    #[test]
    fn a_call_without_usage_settles_at_its_estimate_and_a_refused_one_at_nothing() {
        let r = Reservation {
            at_ms: 0,
            tokens: 1_500,
            input: 0,
            output: 0,
            estimate: (1_000, 500),
            held_micros: 0,
            quota: Hold::default(),
        };
        let u = used(&RULES, &r, None, false);
        assert_eq!((u.input, u.output, u.estimated), (1_000, 500, true));
        let u = used(&RULES, &r, None, true);
        assert_eq!((u.input, u.output, u.estimated, u.cost_micros), (0, 0, false, 0));
    }

    #[test]
    fn a_full_minute_waits_for_its_oldest_bucket_and_a_call_bigger_than_the_minute_goes_alone() {
        let big = Estimate { input: 9_000, max_output: 0 };
        let (row, _) = granted(take(&TokenRow::default(), &RULES, big, free(), 0));
        let row = row.unwrap();
        let small = Estimate { input: 2_000, max_output: 0 };
        assert_eq!(
            take(&row, &RULES, small, free(), 1_000),
            Take::Full { until_ms: 65_000, reason: Reason::TokenLimited }
        );
        let huge = Estimate { input: 50_000, max_output: 0 };
        let (row, r) = granted(take(&TokenRow::default(), &RULES, huge, free(), 0));
        assert_eq!((token_budget::used(&row.unwrap().buckets, 0), r.tokens), (10_000, 10_000));
    }

    #[test]
    fn a_reached_spend_cap_skips_the_provider_until_the_period_ends() {
        let rules =
            TokenRules { limits: Limits { spend_cap_micros: Some(5_000), per_minute: None, ..LIMITS }, ..RULES };
        let e = Estimate { input: 100, max_output: 100 };
        let (row, r) = granted(take(&TokenRow::default(), &rules, e, free(), 1_000));
        assert_eq!(row, None, "no tokens per minute: nothing reserved");
        let u = used(&rules, &r, Some(&Usage { input: 1_000, output: 500, ..Default::default() }), false);
        let row = settle(
            &TokenRow::default(),
            &rules,
            &Settle { reservation: r, used: u, remaining: Remaining::default() },
            1_000,
        );
        let row = row.unwrap();
        assert_eq!(row.spent_micros, 6_000);
        assert_eq!(take(&row, &rules, e, free(), 2_000), Take::Full { until_ms: DAY_MS, reason: Reason::SpendCap });
        assert!(matches!(take(&row, &rules, e, free(), DAY_MS), Take::Granted { .. }), "a new day, a new budget");
    }

    #[test]
    fn a_monthly_period_runs_from_the_first_of_the_month_utc() {
        let rules = Limits { period: Period::Month, ..LIMITS };
        // 2026-12-04T23:00:00Z: December 2026, up to 2027-01-01.
        let now = 1_796_425_200_000;
        assert_eq!(rules.period(now), (1_796_083_200_000, 1_798_761_600_000));
        // 2024-02-29 (a leap day) is in February, which ends on March 1st.
        assert_eq!(rules.period(1_709_208_000_000), (1_706_745_600_000, 1_709_251_200_000));
    }

    #[test]
    fn the_vendors_lowest_remaining_count_corrects_the_window() {
        let h = HintHeaders::default()
            .with("x-ratelimit-remaining-tokens", "4000")
            .with("anthropic-ratelimit-input-tokens-remaining", "3000");
        let count = |left| Some(VendorCount { left, full_at_ms: None });
        assert_eq!(remaining(&h, 0), Remaining { total: count(4_000), input: count(3_000), output: None });
        let r = Reservation {
            at_ms: 0,
            tokens: 1_000,
            input: 0,
            output: 0,
            estimate: (500, 500),
            held_micros: 0,
            quota: Hold::default(),
        };
        let u = Used { input: 500, output: 500, estimated: false, cost_micros: 0 };
        let row = TokenRow::default();
        let row = settle(&row, &RULES, &Settle { reservation: r, used: u, remaining: remaining(&h, 0) }, 0).unwrap();
        assert_eq!(token_budget::used(&row.buckets, 0), 7_000, "the vendor counts 7000 in its minute");
    }

    #[test]
    fn the_vendors_reset_headers_say_when_its_count_leaves_the_minute() {
        // OpenAI's Go duration and Anthropic's RFC 3339 time, at 2026-12-05T00:00:00Z.
        let now = 1_796_428_800_000;
        let h = HintHeaders::default()
            .with("x-ratelimit-remaining-tokens", "1000")
            .with("x-ratelimit-reset-tokens", "1.5s")
            .with("anthropic-ratelimit-output-tokens-remaining", "50")
            .with("anthropic-ratelimit-output-tokens-reset", "2026-12-05T00:00:04Z");
        let r = remaining(&h, now);
        assert_eq!(r.total, Some(VendorCount { left: 1_000, full_at_ms: Some(now + 1_500) }));
        assert_eq!(r.output, Some(VendorCount { left: 50, full_at_ms: Some(now + 4_000) }));
    }

    const APART: TokenRules = TokenRules {
        limits: Limits { per_minute: None, input_per_minute: Some(8_000), output_per_minute: Some(2_000), ..LIMITS },
        ..RULES
    };

    #[test]
    fn input_and_output_limited_apart_each_hold_their_own_part_of_the_estimate() {
        // Long prompts, short answers: the input minute fills while the output minute has room.
        let e = Estimate { input: 3_000, max_output: 500 };
        let (row, r) = granted(take(&TokenRow::default(), &APART, e, free(), 0));
        let row = row.unwrap();
        assert_eq!((r.tokens, r.input, r.output), (3_500, 3_000, 500));
        let (row, _) = granted(take(&row, &APART, e, free(), 1_000));
        let row = row.unwrap();
        assert_eq!(
            take(&row, &APART, e, free(), 2_000),
            Take::Full { until_ms: 65_000, reason: Reason::TokenLimited },
            "6000 of 8000 input tokens held: 3000 more do not fit, while 1000 of 2000 output tokens do"
        );
        // Short prompts, long answers: now the output minute is the wall.
        let wordy = Estimate { input: 100, max_output: 1_500 };
        let (row2, _) = granted(take(&TokenRow::default(), &APART, wordy, free(), 0));
        assert!(matches!(take(&row2.unwrap(), &APART, wordy, free(), 1_000), Take::Full { .. }));
        let left = left(&row, &APART.limits, 1_000);
        assert_eq!(
            (left.tokens, left.input_tokens, left.output_tokens),
            (None, Some(2_000), Some(1_000)),
            "no total limit; what each direction has left"
        );
        assert_eq!(token_budget::used(&row.buckets, 1_000), 7_000, "the total is counted all the same");
    }

    #[test]
    fn each_direction_settles_at_its_usage_and_takes_the_vendors_own_count_for_it() {
        let e = Estimate { input: 3_000, max_output: 1_000 };
        let (row, r) = granted(take(&TokenRow::default(), &APART, e, free(), 0));
        let usage = Usage { input: 2_000, output: 300, ..Default::default() };
        let u = used(&APART, &r, Some(&usage), false);
        let h = HintHeaders::default()
            .with("anthropic-ratelimit-input-tokens-remaining", "5000")
            .with("anthropic-ratelimit-output-tokens-remaining", "1900");
        let s = Settle { reservation: r, used: u, remaining: remaining(&h, 1_000) };
        let row = settle(&row.unwrap(), &APART, &s, 1_000).unwrap();
        assert_eq!(token_budget::used(&row.input_buckets, 1_000), 3_000, "the vendor holds 3000 input tokens");
        assert_eq!(token_budget::used(&row.output_buckets, 1_000), 300, "its 100 output tokens are fewer than ours");
        assert_eq!(token_budget::used(&row.buckets, 1_000), 2_300, "the counted total is never corrected");
    }
}
