//! One item driven end to end: a random valid chain, a random stream of answers (statuses,
//! network errors, Retry-After and reset headers, slow calls), time jumps, early and late
//! wake-ups, lost store races and other workers writing the same shared rows. The item runs
//! `ItemMachine::poll` / `on_outcome` and `record::record` against in-memory `ProviderView`s,
//! writes applied with version checks as tests/common/mod.rs does.
//!
//! Invariants: no panic and no error from well-formed driving; the item ends (Done, Defer or
//! Fail) within a bounded number of steps; the sum of its sleeps stays within the budget and no
//! sleep ends past it; no call after the budget or past a provider's attempts; no call to a
//! provider the item gave up on (or failed over from), whose breaker is open or whose rate gate
//! is closed (as the store holds them when polled); the in-flight cap holds; a deferral's
//! `retry_at_ms` is not in the past; Done follows a successful call on that provider, Fail
//! carries a permanent reason, Defer a retryable one.
#![no_main]
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use resilient_engine::choose::chain::{ProviderView, Writes};
use resilient_engine::config::key_quotas::KeyQuotaConfig;
use resilient_engine::config::{Chain, ChainConfig, ProviderConfig, RateLimitConfig, TokenLimitConfig};
use resilient_engine::facts::retry_after::HintHeaders;
use resilient_engine::item::record::record;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{Effect, ItemMachine, Step, WaitCause, WAKE_SLACK_MS};
use resilient_engine::limits::breaker::{self, Phase};
use resilient_engine::limits::in_flight::{self, Acquire};
use resilient_engine::limits::rate_gate::{self, Take};
use resilient_engine::rng::Rng;
use resilient_engine::verdict::answer_check::{AnswerFacts, SchemaError};
use resilient_engine::verdict::outcome::{classify, CallFacts, Health, Outcome, Verdict, TRANSIENT_ERRORS};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

const DAY: u64 = 86_400_000;
const END_OF_DATES_S: i64 = 253_402_300_799;
const METHODS: &[&str] = &["GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS", "post", ""];
const STRATEGIES: &[&str] = &["full_jitter", "equal_jitter", "decorrelated", "none"];
const RETRY_SETS: &[&str] = &["408,425,429,500,502,503,504", "", "500-599", "429", "100-599", "408,500-599,404"];
const HEALTH_SETS: &[&str] = &["408,500-599", "", "100-599", "429,503"];
const STATUSES: &[u16] =
    &[200, 201, 204, 301, 304, 400, 401, 403, 404, 408, 409, 422, 425, 429, 500, 502, 503, 504, 599];

#[derive(Debug, Arbitrary)]
struct ProviderIn {
    method: u8,
    max_attempts: Option<u8>,
    deadline_ms: Option<u32>,
    threshold: Option<u8>,
    open_ms: Option<u32>,
    rate_limit: Option<(u8, u32, u8)>,
    max_in_flight: Option<u8>,
    key: bool,
}

#[derive(Debug, Arbitrary)]
struct ConfigIn {
    providers: [ProviderIn; 4],
    count: u8,
    strategy: u8,
    base_ms: u16,
    cap_extra_ms: u32,
    max_attempts: u8,
    deadline_ms: u32,
    budget_ms: u32,
    retry_after_cap_ms: u32,
    defer_spread_ms: u32,
    retry_statuses: u8,
    health_statuses: u8,
    count_429: bool,
    retry_unsafe_methods: bool,
    count_answer_misses: bool,
    check_empty: bool,
    check_finish: bool,
    next_provider_when_input_too_long: bool,
    next_provider_on_client_error: bool,
    fail_over_first: bool,
    wait_in_line: bool,
    fleet_limit: bool,
    failure_rate: Option<(u8, u8)>,
    threshold: u8,
    window_ms: u32,
    open_ms: u32,
    open_growth: u8,
    open_max_extra_ms: u32,
    half_open_probes: u8,
    successes_to_close: u8,
}

#[derive(Debug, Arbitrary)]
enum RetryAfterIn {
    Seconds(u16),
    Digits(u64),
    /// Longer than any u64: saturates.
    Huge,
    /// An HTTP-date this many seconds from now (negative: in the past).
    Date(i32),
    Raw(String),
}

#[derive(Debug, Arbitrary)]
enum ResetIn {
    Seconds(u16),
    Decimal(u16, u8),
    EpochSeconds(i32),
    EpochMillis(i32),
    Raw(String),
}

#[derive(Debug, Arbitrary)]
enum Answer {
    Common(u8),
    Status(u16),
    Error(u8),
    Unknown,
    CheckFailed,
    /// A success whose answer the node describes: empty, refused, cut, off-schema or good.
    Answered {
        empty: bool,
        refusal: bool,
        finish: u8,
        schema_miss: bool,
    },
    /// A 400 (or another status) whose body says the input is too long for the model.
    TooLong(u8),
    RetryAfter {
        status: u8,
        value: RetryAfterIn,
    },
    Reset {
        status: u8,
        value: ResetIn,
        exhausted: bool,
        x_prefix: bool,
    },
}

/// Another worker touching provider `provider`'s shared rows between two polls of this item.
#[derive(Debug, Arbitrary)]
enum Foreign {
    Failure(u8),
    Success(u8),
    Probe(u8),
    InFlight(u8),
    CloseGate(u8, u32),
    TakeGate(u8),
    /// The store read took this long.
    Jump(u32),
}

#[derive(Debug, Arbitrary, Default)]
struct Event {
    answer: Option<Answer>,
    call_ms: u16,
    late_wake_ms: u16,
    wake_early: bool,
    lose_race: bool,
    foreign: Option<Foreign>,
}

#[derive(Debug, Arbitrary)]
struct Input {
    config: ConfigIn,
    start: u64,
    seed: u64,
    events: Vec<Event>,
}

fn pick<T: Copy>(xs: &[T], i: u8) -> T {
    xs[i as usize % xs.len()]
}

impl ConfigIn {
    /// Always within validation's ranges, biased small so breakers trip and budgets run out.
    fn to_config(&self) -> ChainConfig {
        let n = 1 + self.count as usize % 4;
        let base_ms = 1 + self.base_ms as i64;
        let open_ms = 1 + (self.open_ms as u64 % DAY) as i64;
        ChainConfig {
            providers: self.providers[..n]
                .iter()
                .enumerate()
                .map(|(i, p)| ProviderConfig {
                    name: format!("p{i}"),
                    method: pick(METHODS, p.method).to_string(),
                    idempotent: p.max_attempts.is_some_and(|v| v % 2 == 0),
                    // From a byte already drawn (the corpus keeps its shape).
                    repairs: p.key,
                    max_attempts: p.max_attempts.map(|v| 1 + v as i64 % 100),
                    deadline_ms: p.deadline_ms.map(|v| 1 + (v as u64 % DAY) as i64),
                    threshold: p.threshold.map(|v| 1 + v as i64 % 20),
                    open_ms: p.open_ms.map(|v| 1 + (v as u64 % DAY) as i64),
                    rate_limit: p.rate_limit.map(|(r, per, b)| RateLimitConfig {
                        requests: 1 + r as i64,
                        period_ms: 1 + (per as u64 % DAY) as i64,
                        burst: 1 + b as i64 % 8,
                    }),
                    max_in_flight: p.max_in_flight.map(|v| 1 + v as i64 % 4),
                    // Routing's settings from bytes already drawn (the corpus keeps its shape).
                    tier: p.open_ms.map(|v| 1 + v as i64 % 3),
                    weight: p.deadline_ms.map(|v| (v % 4) as f64),
                    // Token limits from bytes already drawn: a minute of 1 to 100000 tokens, and
                    // a spend cap priced per million where the provider has a key.
                    token_limit: p.rate_limit.map(|(r, per, b)| TokenLimitConfig {
                        tokens_per_minute: if b % 3 == 0 { 0 } else { 1 + per as i64 % 100_000 },
                        // Input and output apart (Anthropic's) on some providers, with or without a total.
                        input_tokens_per_minute: if b % 2 == 0 { 1 + (per / 7) as i64 % 50_000 } else { 0 },
                        output_tokens_per_minute: if b % 2 == 0 { 1 + r as i64 * 40 } else { 0 },
                        output_reserve: b as i64,
                        spend_cap: if p.key { 0.001 * (1.0 + r as f64) } else { 0.0 },
                        price_input: if p.key { 1.0 } else { 0.0 },
                        price_output: r as f64,
                        ..Default::default()
                    }),
                })
                .collect(),
            strategy: pick(STRATEGIES, self.strategy).to_string(),
            base_ms,
            cap_ms: (base_ms + (self.cap_extra_ms as u64 % DAY) as i64).min(DAY as i64),
            max_attempts: 1 + self.max_attempts as i64 % 10,
            deadline_ms: 1 + (self.deadline_ms as u64 % DAY) as i64,
            budget_ms: 1 + (self.budget_ms as u64 % (7 * DAY)) as i64,
            retry_after_cap_ms: (self.retry_after_cap_ms as u64 % (DAY + 1)) as i64,
            defer_spread_ms: (self.defer_spread_ms as u64 % (DAY + 1)) as i64,
            retry_statuses: pick(RETRY_SETS, self.retry_statuses).to_string(),
            health_statuses: pick(HEALTH_SETS, self.health_statuses).to_string(),
            count_429: self.count_429,
            retry_unsafe_methods: self.retry_unsafe_methods,
            count_answer_misses: self.count_answer_misses,
            check_empty: self.check_empty,
            check_finish: self.check_finish,
            next_provider_when_input_too_long: Some(self.next_provider_when_input_too_long),
            next_provider_on_client_error: self.next_provider_on_client_error,
            fail_over_first: self.fail_over_first,
            wait_in_line: Some(self.wait_in_line),
            fleet_limit: Some(self.fleet_limit),
            // From bytes already drawn (the corpus keeps its shape).
            continue_broken_streams: Some(self.fleet_limit && self.wait_in_line),
            learn_stream_pace: Some(self.fleet_limit && self.check_empty),
            wait_for_slot: Some(self.fleet_limit && !self.wait_in_line),
            priority: Some(["low", "normal", "high"][self.strategy as usize % 3].into()),
            // Every switch above is set: the version only decides the key shared by workflow.
            node: ["", "callChain", "chatModel", "guard"][self.threshold as usize % 4].into(),
            type_version: [1.0, 2.1, 2.2][self.count as usize % 3],
            workflow_id: ["", "wf-1"][self.successes_to_close as usize % 2].into(),
            fair_share_key: ["", "customer-1", "customer-2"][self.count as usize % 3].into(),
            fair_share_weight: 1 + i64::from(self.count % 4),
            // A key with a customer name counts under a quota of few requests or tokens.
            key_quotas: match self.count % 3 {
                0 => Vec::new(),
                _ => vec![KeyQuotaConfig {
                    measure: ["requests", "tokens", "spend"][self.threshold as usize % 3].into(),
                    per: ["minute", "day", "month"][self.successes_to_close as usize % 3].into(),
                    limit: f64::from(1 + self.max_attempts % 8),
                }],
            },
            routing: pick(&["order", "weighted", "least_busy", "latency"], self.strategy / 4).to_string(),
            retry_budget_percent: (self.threshold % 3) as i64 * 10,
            retry_budget_floor_per_s: (self.successes_to_close % 3) as i64,
            retry_budget_window_ms: ChainConfig::default().retry_budget_window_ms,
            // Hedging puts two calls out at once: tests/hedging.rs drives it; here one call at a time.
            hedge: "off".into(),
            hedge_delay_ms: ChainConfig::default().hedge_delay_ms,
            hedge_min_ms: ChainConfig::default().hedge_min_ms,
            hedge_max_ms: ChainConfig::default().hedge_max_ms,
            max_hedges: ChainConfig::default().max_hedges,
            // Streamed items are the chat model's, driven through the same machine: their limits
            // are covered by tests/streams.rs; here every call is a plain one.
            streams: false,
            first_chunk_deadline_ms: ChainConfig::default().first_chunk_deadline_ms,
            stream_idle_ms: ChainConfig::default().stream_idle_ms,
            trip_rule: if self.failure_rate.is_some() { "failure_rate" } else { "consecutive" }.to_string(),
            failure_rate: self.failure_rate.map_or(0.5, |(r, _)| (1 + r as u32) as f64 / 256.0),
            min_calls: self.failure_rate.map_or(10, |(_, m)| 1 + m as i64 % 20),
            threshold: 1 + self.threshold as i64 % 20,
            window_ms: 1 + (self.window_ms as u64 % DAY) as i64,
            open_ms,
            open_growth: 1.0 + self.open_growth as f64 / 2.56,
            open_max_ms: open_ms + (self.open_max_extra_ms as u64 % (6 * DAY)) as i64,
            // Some chains probe every 1 to 60 s (Call Chain 2.2's Probe Interval), the rest not.
            probe_interval_ms: Some(match self.open_max_extra_ms % 2 {
                0 => 0,
                _ => 1_000 + (self.open_max_extra_ms as u64 % 59_000) as i64,
            }),
            half_open_probes: self.half_open_probes as i64 % 4,
            successes_to_close: 1 + self.successes_to_close as i64 % 4,
        }
    }
}

fn http_date(now_ms: u64, offset_s: i32) -> String {
    let secs = ((now_ms / 1000) as i64 + offset_s as i64).clamp(0, END_OF_DATES_S);
    httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs as u64))
}

impl Answer {
    fn outcome(&self, now_ms: u64) -> Outcome {
        let status = |s: u16| Outcome::status(s, HintHeaders::default());
        match self {
            Answer::Common(i) => status(pick(STATUSES, *i)),
            Answer::Status(s) => status(*s),
            Answer::Error(i) => Outcome::Error { code: pick(TRANSIENT_ERRORS, *i).to_string() },
            Answer::Unknown => Outcome::Error { code: "ENOTFOUND".into() },
            Answer::CheckFailed => Outcome::check_failed(200, "schema"),
            Answer::Answered { empty, refusal, finish, schema_miss } => Outcome::answered(
                200,
                AnswerFacts {
                    empty: *empty,
                    refusal: *refusal,
                    finish: Some(pick(&["stop", "length", "SAFETY", "max_tokens", "end_turn"], *finish).to_string()),
                    schema_checked: true,
                    schema_errors: if *schema_miss {
                        vec![SchemaError { path: "/a".into(), message: "required".into() }]
                    } else {
                        Vec::new()
                    },
                },
            ),
            Answer::TooLong(i) => Outcome::Status {
                status: if *i % 2 == 0 { 400 } else { pick(STATUSES, *i) },
                headers: HintHeaders::default(),
                failed_check: None,
                answer: None,
                body: Some(r#"{"error":{"message":"prompt is too long: 9 tokens > 8 maximum"}}"#.into()),
            },
            Answer::RetryAfter { status, value } => {
                let v = match value {
                    RetryAfterIn::Seconds(s) => s.to_string(),
                    RetryAfterIn::Digits(d) => d.to_string(),
                    RetryAfterIn::Huge => "9".repeat(30),
                    RetryAfterIn::Date(off) => http_date(now_ms, *off),
                    RetryAfterIn::Raw(s) => s.clone(),
                };
                let headers = HintHeaders::default().with("retry-after", v);
                Outcome::status(pick(STATUSES, *status), headers)
            }
            Answer::Reset { status, value, exhausted, x_prefix } => {
                let v = match value {
                    ResetIn::Seconds(s) => s.to_string(),
                    ResetIn::Decimal(s, f) => format!("{s}.{f}"),
                    ResetIn::EpochSeconds(off) => ((now_ms / 1000) as i64 + *off as i64).max(0).to_string(),
                    ResetIn::EpochMillis(off) => (now_ms as i64 + *off as i64).max(0).to_string(),
                    ResetIn::Raw(s) => s.clone(),
                };
                let remaining = exhausted.then(|| "0".to_string());
                let (reset, left) = if *x_prefix {
                    ("x-ratelimit-reset", "x-ratelimit-remaining")
                } else {
                    ("ratelimit-reset", "ratelimit-remaining")
                };
                let mut headers = HintHeaders::default().with(reset, v);
                headers.set(left, remaining);
                Outcome::status(pick(STATUSES, *status), headers)
            }
        }
    }
}

/// In-memory store: applies writes with the version check of tests/common/mod.rs.
struct Store {
    views: Vec<ProviderView>,
}

impl Store {
    fn apply(&mut self, w: &Writes) {
        let v = &mut self.views[w.provider];
        if let Some(b) = &w.breaker {
            assert_eq!(b.version, v.breaker.version + 1, "breaker version must rise by one");
            v.breaker = b.clone();
        }
        if let Some(g) = &w.gate {
            assert_eq!(g.version, v.gate.version + 1, "gate version must rise by one");
            v.gate = g.clone();
        }
        if let Some(f) = &w.in_flight {
            assert_eq!(f.version, v.in_flight.version + 1, "in-flight version must rise by one");
            v.in_flight = f.clone();
        }
        // The key's row, the same in every provider's view.
        if let Some(q) = &w.quota {
            assert_eq!(q.version, v.quota.version + 1, "quota version must rise by one");
            self.views.iter_mut().for_each(|v| v.quota = q.clone());
        }
    }

    fn interfere(&mut self, chain: &Chain, f: &Foreign, now: &mut u64) {
        let n = chain.providers.len();
        let other = "other-worker";
        let health = |p: u8, health: Health, store: &mut Store| {
            let effect = Effect {
                provider: p as usize % n,
                health,
                holder: other.into(),
                label: "500".into(),
                gate_close_until_ms: None,
                release_in_flight: false,
                latency_ms: Some(*now % 1_000),
                first_chunk: *now % 2 == 0,
                sample: *now,
                window: None,
                seat: None,
                tokens: None,
                // Another worker's streamed call: its first chunk's time, or a cut.
                pace: Some(match *now % 3 {
                    0 => resilient_engine::facts::pace_row::PaceNews::Cut(*now % 20_000),
                    _ => resilient_engine::facts::pace_row::PaceNews::FirstChunk(*now % 30_000),
                }),
                pace_gap: (*now % 5 == 0).then_some(*now % 2_000),
            };
            if let Some(w) = record(chain, &store.views[effect.provider], &effect, *now).writes {
                store.apply(&w);
            }
        };
        match *f {
            Foreign::Failure(p) => health(p, Health::Failure, self),
            Foreign::Success(p) => health(p, Health::Success, self),
            Foreign::Probe(p) => {
                let i = p as usize % n;
                let d = breaker::admit(&self.views[i].breaker, &chain.providers[i].breaker, *now, other);
                if let Some(row) = d.row {
                    self.apply(&Writes { provider: i, breaker: Some(row), ..Default::default() });
                }
            }
            Foreign::InFlight(p) => {
                let i = p as usize % n;
                let pr = &chain.providers[i];
                if let Some(cap) = pr.max_in_flight {
                    if let Acquire::Granted { row } =
                        in_flight::acquire(&self.views[i].in_flight, cap, other, *now, pr.breaker.probe_lease_ms)
                    {
                        self.apply(&Writes { provider: i, in_flight: Some(row), ..Default::default() });
                    }
                }
            }
            Foreign::CloseGate(p, ms) => {
                let i = p as usize % n;
                if let Some(row) = rate_gate::close(&self.views[i].gate, now.saturating_add(ms as u64)) {
                    self.apply(&Writes { provider: i, gate: Some(row), ..Default::default() });
                }
            }
            Foreign::TakeGate(p) => {
                let i = p as usize % n;
                match rate_gate::take(&self.views[i].gate, chain.providers[i].rate_limit.as_ref(), *now, DAY) {
                    Take::Now { row: Some(row) } | Take::Reserved { row, .. } => {
                        self.apply(&Writes { provider: i, gate: Some(row), ..Default::default() })
                    }
                    _ => {}
                }
            }
            Foreign::Jump(ms) => *now += ms as u64,
        }
    }
}

/// Moved on from with attempts left after an outcome worth retrying (failed over): a chain that
/// waits for a slot (the chat model 1.2) may ask that provider again as a last resort, once the
/// wait it was left for is over, where no other provider can take the call.
fn last_resort(chain: &Chain, provider: usize, attempt: u32, outcome: &Outcome, now: u64) -> bool {
    let p = &chain.providers[provider];
    let facts = CallFacts { unsafe_method: p.unsafe_method, has_idempotency_key: p.unsafe_method };
    chain.slot_wait_ms > 0
        && attempt < p.max_attempts
        && classify(outcome, facts, &chain.rules, now).verdict == Verdict::Retry
}

fuzz_target!(|input: Input| {
    let cfg = input.config.to_config();
    let chain = match cfg.validate() {
        Ok(c) => Arc::new(c),
        Err(e) => {
            assert!(e.field().is_some_and(|f| !f.is_empty()), "{e}");
            return;
        }
    };
    let n = chain.providers.len();
    // Any clock up to about year 3000, including 0.
    let start = input.start % (1 << 45);
    // The item's budget; where it waits its turn in line, counted from its first call.
    let mut deadline = start + chain.budget_ms;
    let keys: Vec<Option<String>> =
        input.config.providers[..n].iter().enumerate().map(|(i, p)| p.key.then(|| format!("key-{i}"))).collect();
    let mut m = ItemMachine::new(chain.clone(), start, "item".into(), keys.clone(), Rng::seeded(input.seed));
    let mut store = Store { views: vec![ProviderView::default(); n] };
    let mut now = start;

    let max_calls: usize = chain.providers.iter().map(|p| p.max_attempts as usize).sum();
    let bound = 3 * (max_calls + n + input.events.len()) + 10;
    let default_event = Event::default();
    let mut events = input.events.iter();
    let mut last_success: Option<usize> = None;
    let mut calls = vec![0u32; n];
    // Providers this item is done with: an answer that neither succeeded nor led to a wait.
    let mut gave_up = vec![false; n];
    // A repair round: due after a provider's first schema miss (where it repairs), asked once.
    let (mut repair_due, mut repaired) = (vec![false; n], vec![false; n]);
    let mut steps = 0;

    let end = loop {
        steps += 1;
        assert!(steps <= bound, "the item did not end within {bound} steps");
        let ev = events.next().unwrap_or(&default_event);
        if let Some(f) = &ev.foreign {
            store.interfere(&chain, f, &mut now);
        }
        if chain.wait_in_line && calls.iter().all(|&c| c == 0) {
            // (A poll decides as of its wait's end, up to WAKE_SLACK_MS ahead of `now`.)
            deadline = deadline.max(now + WAKE_SLACK_MS + chain.budget_ms);
        }
        let poll = m.poll(now, &store.views).expect("poll with one view per provider");
        match poll.step {
            Step::Call { provider, attempt, deadline_ms, idempotency_key, repair, .. } => {
                assert_eq!(repair, std::mem::take(&mut repair_due[provider]), "a repair round when due, only then");
                let p = &chain.providers[provider];
                assert!(now < deadline, "a call at {now} after the budget ended at {deadline}");
                assert!(
                    deadline_ms >= 1 && deadline_ms <= p.deadline_ms && now + deadline_ms <= deadline,
                    "deadline {deadline_ms}"
                );
                assert_eq!(attempt, calls[provider] + 1, "attempt numbering");
                // A repair round is one call beyond Max Attempts (documented so).
                let most = p.max_attempts + u32::from(repaired[provider]);
                assert!(attempt <= most, "attempt {attempt} of {}", p.max_attempts);
                assert_eq!(idempotency_key, if p.unsafe_method { keys[provider].clone() } else { None });
                assert!(!gave_up[provider], "a call to provider {provider} after the item gave up on it");
                let v = &store.views[provider];
                // A poll up to WAKE_SLACK_MS before its wait ends decides as of the wait's end.
                let decided = now + WAKE_SLACK_MS;
                assert!(
                    !(v.breaker.phase == Phase::Open && decided < v.breaker.open_until_ms),
                    "a call to provider {provider} at {now} while its breaker is open until {}",
                    v.breaker.open_until_ms
                );
                assert!(
                    decided >= v.gate.closed_until_ms,
                    "a call to provider {provider} at {now} while its gate is closed until {}",
                    v.gate.closed_until_ms
                );
                if ev.lose_race && poll.writes.is_some() {
                    // The compare-and-set lost: nothing committed; read again and poll again
                    // (poll drops the call it had handed out).
                    continue;
                }
                if let Some(w) = &poll.writes {
                    store.apply(w);
                }
                if let Some(cap) = p.max_in_flight {
                    let live = store.views[provider].in_flight.leases.iter().filter(|l| l.until_ms > now).count();
                    assert!(live as u32 <= cap, "{live} calls in flight to provider {provider}, cap {cap}");
                }
                calls[provider] += 1;
                // A call that outlives its deadline is cut at it: our own TIMEOUT.
                let answer = ev.answer.as_ref().unwrap_or(&Answer::Common(16)); // 503
                let (outcome, took) = if ev.call_ms as u64 > deadline_ms {
                    (Outcome::Error { code: "TIMEOUT".into() }, deadline_ms)
                } else {
                    (answer.outcome(now), ev.call_ms as u64)
                };
                now += took;
                let effect = m
                    .on_outcome(now, &outcome, &store.views, None, CallEnd::default())
                    .expect("the outcome of the outstanding call");
                assert_eq!(effect.provider, provider);
                let log = m.report().attempts.last().expect("the call is logged");
                assert_eq!((log.provider, log.attempt), (provider, attempt));
                let p = &chain.providers[provider];
                if p.repairs && log.check.map(|c| c.name()) == Some("schema") && !repaired[provider] {
                    (repaired[provider], repair_due[provider]) = (true, true);
                } else if m.finished().is_none()
                    && log.wait_cause.is_none()
                    && !last_resort(&chain, provider, attempt, &outcome, now)
                {
                    gave_up[provider] = true;
                }
                last_success = (matches!(outcome, Outcome::Status { status: 100..=399, .. })
                    && outcome.decisive_check(chain.rules.answer_checks).is_none())
                .then_some(provider);
                if let Some(w) = record(&chain, &store.views[provider], &effect, now).writes {
                    store.apply(&w);
                }
                // Its in-flight slot, if any, is back.
                assert!(
                    store.views[provider].in_flight.leases.iter().all(|l| l.holder != "item"),
                    "in-flight slot kept"
                );
            }
            Step::Sleep { ms, cause } => {
                assert!(ms > 0, "a zero sleep");
                assert!(now + ms <= deadline, "a sleep to {} past the budget's end {deadline}", now + ms);
                // A gate reservation writes before its sleep; any other sleep writes at most a gate
                // slot given back (a reserved slot the item did not take), the gate's row alone,
                // its arrival time moved back, its closure kept.
                if let (Some(w), false) = (&poll.writes, cause == WaitCause::RateGate) {
                    let (before, gate) = (&store.views[w.provider].gate, w.gate.as_ref());
                    assert!(
                        gate.is_some_and(|g| g.tat_us < before.tat_us && g.closed_until_ms == before.closed_until_ms),
                        "only a gate reservation or a gate slot given back writes before a sleep: {w:?}"
                    );
                    assert!(
                        w.breaker.is_none() && w.in_flight.is_none() && w.limit.is_none() && w.tokens.is_none(),
                        "a give-back writes the gate alone: {w:?}"
                    );
                }
                if let Some(w) = &poll.writes {
                    store.apply(w);
                }
                if ev.wake_early && ms > 1 {
                    now += ms / 2;
                } else {
                    now += ms + ev.late_wake_ms as u64;
                }
            }
            Step::Done { provider, fallback, .. } => {
                assert_eq!(last_success, Some(provider), "Done without a successful call on it");
                // A fallback is any provider but the item's first choice (its route's head).
                let first = m.report().route.as_ref().map_or(0, |r| r.order[0]);
                assert_eq!(fallback, provider != first);
                break poll.step;
            }
            Step::Defer { retry_at_ms, reason } => {
                assert!(retry_at_ms >= now, "deferred to {retry_at_ms}, in the past at {now}");
                assert!(reason.is_retryable(), "deferred for a permanent reason {reason:?}");
                break poll.step;
            }
            Step::Fail { reason } => {
                assert!(!reason.is_retryable(), "failed for a retryable reason {reason:?}");
                break poll.step;
            }
            Step::Await { .. } => unreachable!("only a hedging chain awaits"),
            Step::Queue { .. } => unreachable!("only an item in a pool is queued"),
        }
    };

    let report = m.report();
    // Its budget, and any wait in line before its first call (not counted against it).
    let most = deadline - start;
    assert!(report.slept_ms <= most, "slept {} ms of a {} ms budget and its wait for its turn", report.slept_ms, most);
    assert_eq!(report.attempts.len() as u32, calls.iter().sum::<u32>());
    // Finished is final: polling again returns the same step and writes nothing.
    let again = m.poll(now + 1, &store.views).expect("poll after the end");
    assert_eq!(again.step, end);
    assert!(again.writes.is_none());
});
