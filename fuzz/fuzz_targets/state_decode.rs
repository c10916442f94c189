//! Shared state as the store hands it back: arbitrary bytes decoded as JSON into a
//! `ProviderView` (and, separately, a bare `BreakerRow`). Whatever decodes, the functions over
//! it never panic, and every row they return has `version` = stored version + 1, returned
//! only when something changed. Besides: an open breaker admits nobody before `open_until_ms`;
//! probes never exceed the policy's count; a trip opens for a window within the policy's
//! bounds; a closed gate grants no slot; a reserved slot is in the future within the wait
//! allowed; GCRA never goes back in time; an in-flight grant respects the cap.
//!
//! Input: one JSON value, then bytes that pick the policy, clock, holder and outcome. Input
//! that is not JSON builds the rows from its bytes instead, biased to the edges of u64/u32 and
//! to realistic clocks (mutating JSON digits rarely reaches those), and the rows go through
//! the same JSON encoding and decoding the store does, which must give them back unchanged.
#![no_main]
use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use resilient_engine::choose::chain::ProviderView;
use resilient_engine::choose::latency::LatencyRow;
use resilient_engine::limits::breaker::{self, Admission, BreakerPolicy, BreakerRow, Bucket, Phase, TripRule};
use resilient_engine::limits::in_flight::{self, Acquire, InFlightRow};
use resilient_engine::limits::key_quota::{self, Measure, Per, Quota, QuotaRow, Size};
use resilient_engine::limits::learned_limit::{LimitRow, Share};
use resilient_engine::limits::lease::Lease;
use resilient_engine::limits::rate_gate::{self, GateRow, RateLimit, Take};
use resilient_engine::limits::retry_budget::{BudgetRow, Second};
use resilient_engine::limits::spend_hold::SpendRow;
use resilient_engine::limits::token_budget::{Limits, Period, TokenRow};
use resilient_engine::verdict::outcome::Health;

#[derive(Debug, Arbitrary)]
struct Knobs {
    now_ms: u64,
    holder: u8,
    health: u8,
    failure_rate: bool,
    rate: u8,
    min_calls: u8,
    threshold: u16,
    window_ms: u32,
    open_ms: u32,
    open_growth: u8,
    open_max_extra: u32,
    half_open_probes: u8,
    successes_to_close: u8,
    probe_lease_ms: u32,
    requests: u32,
    period_ms: u32,
    burst: u8,
    max_wait_ms: u32,
    cap: u8,
    close_until_ms: u64,
}

impl Knobs {
    /// Any policy validation could produce (config.rs ranges), so the fuzzer spends no time on
    /// policies the engine never runs with.
    fn policy(&self) -> BreakerPolicy {
        let open_ms = 1 + self.open_ms as u64 % 86_400_000;
        BreakerPolicy {
            trip: if self.failure_rate {
                TripRule::FailureRate {
                    rate: (1 + self.rate as u32) as f64 / 256.0,
                    min_calls: 1 + self.min_calls as u32,
                }
            } else {
                TripRule::Consecutive
            },
            threshold: 1 + self.threshold as u32 % 10_000,
            window_ms: 1 + self.window_ms as u64 % 86_400_000,
            open_ms,
            open_growth: 1.0 + self.open_growth as f64 / 2.56,
            open_max_ms: open_ms + self.open_max_extra as u64 % (7 * 86_400_000),
            // Validation: 0 (none) or 1 s to a day.
            probe_interval_ms: match self.open_max_extra % 3 {
                0 => 0,
                _ => 1_000 + self.open_max_extra as u64 % 86_400_000,
            },
            half_open_probes: self.half_open_probes as u32 % 8,
            successes_to_close: 1 + self.successes_to_close as u32 % 8,
            // Validation: twice the call deadline (1 ms to a day), at least deadline + 5 s.
            probe_lease_ms: 5_001 + self.probe_lease_ms as u64 % (2 * 86_400_000),
            // Validation: the call deadline, below the lease.
            probe_answer_ms: 1 + self.probe_lease_ms as u64 % 5_000,
        }
    }

    fn holder(&self) -> String {
        // A small alphabet, so holders collide with the leases in the decoded rows.
        ["a", "b", "c", "", "worker-1"][self.holder as usize % 5].to_string()
    }

    fn health(&self) -> Health {
        [Health::Success, Health::Failure, Health::Neutral][self.health as usize % 3]
    }
}

fuzz_target!(|data: &[u8]| {
    let mut views = serde_json::Deserializer::from_slice(data).into_iter::<ProviderView>();
    if let Some(Ok(view)) = views.next() {
        let knobs =
            Knobs::arbitrary(&mut Unstructured::new(&data[views.byte_offset()..])).unwrap_or_else(|_| Knobs::default());
        check_view(&view, &knobs);
    } else {
        let mut u = Unstructured::new(data);
        if let Ok(view) = built_view(&mut u) {
            let json = serde_json::to_vec(&view).expect("a row encodes");
            let decoded: ProviderView = serde_json::from_slice(&json).expect("an encoded row decodes");
            assert_eq!(decoded, view, "rows survive the store's JSON round trip");
            let now = wide(&mut u).unwrap_or(0);
            let knobs = Knobs { now_ms: now, ..Knobs::arbitrary(&mut u).unwrap_or_else(|_| Knobs::default()) };
            check_view(&decoded, &knobs);
        }
    }
    let mut rows = serde_json::Deserializer::from_slice(data).into_iter::<BreakerRow>();
    if let Some(Ok(row)) = rows.next() {
        let knobs =
            Knobs::arbitrary(&mut Unstructured::new(&data[rows.byte_offset()..])).unwrap_or_else(|_| Knobs::default());
        check_breaker(&row, &knobs);
    }
});

fn check_view(view: &ProviderView, knobs: &Knobs) {
    check_breaker(&view.breaker, knobs);
    check_gate(view, knobs);
    check_in_flight(view, knobs);
    check_latency_and_budget(view, knobs);
    check_tokens(view, knobs);
    check_quota(view, knobs);
}

/// A hostile quota row: no panic, no overflow; a call let go never finds a quota spent, its row's
/// version rises by one, and settling it releases its hold once.
fn check_quota(view: &ProviderView, k: &Knobs) {
    let now = k.now_ms;
    let quotas = [
        Quota { measure: Measure::Requests, per: Per::Minute, limit: 1 + k.window_ms as u64 % 50 },
        Quota { measure: Measure::Tokens, per: Per::Day, limit: 1 + k.open_ms as u64 },
        Quota { measure: Measure::Spend, per: Per::Month, limit: 1 + k.window_ms as u64 },
    ];
    let size = Size { tokens: k.open_ms as u64 % 5_000, micros: k.window_ms as u64 % 9_000 };
    match key_quota::take(&view.quota, &quotas, size, now.saturating_add(30_000), now) {
        Ok(taken) => {
            assert_eq!(taken.row.version, view.quota.version.wrapping_add(1));
            for q in &quotas {
                assert!(view.quota.used(q, now) < q.limit, "let go past a spent quota: {q:?}");
            }
            let used = Size { tokens: size.tokens / 2, micros: size.micros / 2 };
            if let Some(next) = key_quota::settle(&taken.row, &quotas, taken.hold, used, now) {
                assert_eq!(next.version, taken.row.version.wrapping_add(1));
                assert!(next.held(Measure::Tokens, now) <= taken.row.held(Measure::Tokens, now));
            }
        }
        Err(until) => assert!(until > now || until == u64::MAX, "look again at {until}, now {now}"),
    }
}

/// A hostile tokens row: no panic, no overflow; a grant never leaves a limited window (the total,
/// the input, the output) over its limit from under it; a settled row's version rises by one.
fn check_tokens(view: &ProviderView, k: &Knobs) {
    use resilient_engine::limits::token_budget::{used, Estimate};
    use resilient_engine::limits::token_limit::{self, Period, Prices, Reservation, Settle, Take, TokenRules, Used};
    let now = k.now_ms;
    let limits = Limits {
        per_minute: (k.burst % 3 != 0).then_some(1 + k.requests as u64 % 1_000_000),
        input_per_minute: (k.burst % 3 != 1).then_some(1 + k.min_calls as u64 % 500_000),
        output_per_minute: (k.cap % 3 == 0).then_some(1 + k.rate as u64 % 100_000),
        spend_cap_micros: (k.cap % 2 == 0).then_some(k.close_until_ms % 1_000_000_000),
        period: if k.burst % 2 == 0 { Period::Day } else { Period::Month },
    };
    let rules = TokenRules {
        limits,
        output_reserve: 1 + k.period_ms as u64 % 100_000,
        prices: Prices {
            input: k.rate as f64,
            output: k.min_calls as f64,
            cached_input: 0.0,
            reasoning: 0.5,
            cache_write: 0.0,
        },
    };
    let estimate = Estimate { input: k.window_ms as u64, max_output: k.open_ms as u64 };
    let t = &view.tokens;
    let windows = [
        (&t.buckets, limits.per_minute),
        (&t.input_buckets, limits.input_per_minute),
        (&t.output_buckets, limits.output_per_minute),
    ];
    let held = token_limit::SpendHolds { row: &view.spend, lease_ms: k.period_ms as u64 };
    let taken = token_limit::take(&view.tokens, &rules, estimate, held, now);
    // A grant under a spend cap: what was spent and what the calls out hold is below it.
    if let (Take::Granted { .. }, Some(cap)) = (&taken, limits.spend_cap_micros) {
        let holds = resilient_engine::limits::spend_hold::held(&view.spend, now);
        assert!(limits.spent(&view.tokens, now).saturating_add(holds) < cap, "granted past the spend cap");
    }
    if let Take::Granted { spend: Some(spend), .. } = &taken {
        assert_eq!(spend.version, view.spend.version.wrapping_add(1));
        let until = now.saturating_add(held.lease_ms);
        let Take::Granted { reservation, .. } = &taken else { unreachable!() };
        let released = resilient_engine::limits::spend_hold::release(spend, until, reservation.held_micros, now);
        let released = released.expect("its hold is there");
        // Its own hold released, the others' live holds are what they were.
        assert_eq!(
            resilient_engine::limits::spend_hold::held(&released, now),
            resilient_engine::limits::spend_hold::held(&view.spend, now)
        );
    }
    match taken {
        Take::Granted { row: Some(row), reservation, .. } => {
            for (window, limit) in windows {
                assert!(limit.is_none_or(|l| used(window, now) <= l), "granted into an overfull minute");
            }
            assert_eq!(row.version, view.tokens.version.wrapping_add(1));
            let used =
                Used { input: k.max_wait_ms as u64, output: k.threshold as u64, estimated: false, cost_micros: 7 };
            let count = |left: u64, full_at_ms: Option<u64>| Some(token_limit::VendorCount { left, full_at_ms });
            let s = Settle {
                reservation,
                used,
                remaining: token_limit::Remaining {
                    total: count(k.close_until_ms, Some(now.wrapping_add(k.period_ms as u64))),
                    input: count(k.max_wait_ms as u64, None),
                    output: if k.health % 2 == 0 {
                        count(k.open_ms as u64, Some(now.wrapping_sub(k.period_ms as u64)))
                    } else {
                        None
                    },
                },
            };
            if let Some(next) = token_limit::settle(&row, &rules, &s, now) {
                assert_eq!(next.version, row.version.wrapping_add(1));
            }
        }
        Take::Granted { row: None, .. } => unreachable!("a limited minute always reserves"),
        Take::Full { .. } => {}
    }
    let r = Reservation {
        at_ms: now,
        tokens: k.window_ms as u64,
        input: 1,
        output: 2,
        estimate: (1, 2),
        held_micros: 3,
        quota: Default::default(),
    };
    let _ = token_limit::used(&rules, &r, None, k.health % 2 == 0);
    let _ = token_limit::left(&view.tokens, &rules.limits, now);
}

/// Hostile latency and budget rows: no panic, no overflow, versions rise by one, a median never
/// above its p95, a budget never grants past its allowance.
fn check_latency_and_budget(view: &ProviderView, k: &Knobs) {
    use resilient_engine::choose::latency::{estimate, record, typical_ms};
    use resilient_engine::limits::retry_budget::{RetryBudget, Spend};
    let now = k.now_ms;
    if let Some(e) = estimate(&view.latency, now) {
        assert!(e.p50_ms <= e.p95_ms, "median above p95: {e:?}");
    }
    let _ = typical_ms(&view.latency, now, k.probe_lease_ms as u64);
    let r = record(&view.latency, k.probe_lease_ms as u64, now);
    assert_eq!(r.version, view.latency.version.wrapping_add(1));
    let budget = RetryBudget { percent: 20, floor_per_s: 10, window_ms: 10_000 };
    let (retries, allowed) = budget.standing(&view.budget, now);
    match budget.spend(&view.budget, now) {
        Spend::Granted(row) => {
            assert!(retries < allowed, "granted past the allowance");
            assert_eq!(row.version, view.budget.version.wrapping_add(1));
        }
        Spend::Spent { until_ms } => assert!(until_ms > now || now == u64::MAX, "spent until the past"),
    }
    let d = budget.deposit(&view.budget, now);
    assert_eq!(d.version, view.budget.version.wrapping_add(1));
}

/// A u64 from the places overflows and off-by-ones live: 0, the top of u64 and u32, small
/// values, realistic ms and µs clocks (2023 on), or anything.
fn wide(u: &mut Unstructured) -> arbitrary::Result<u64> {
    Ok(match u8::arbitrary(u)? % 7 {
        0 => 0,
        1 => u64::MAX - u8::arbitrary(u)? as u64,
        2 => u32::MAX as u64 - u8::arbitrary(u)? as u64,
        3 => u16::arbitrary(u)? as u64,
        4 => 1_700_000_000_000 + u32::arbitrary(u)? as u64,
        5 => 1_700_000_000_000_000 + u64::arbitrary(u)? % (1 << 40),
        _ => u64::arbitrary(u)?,
    })
}

fn wide32(u: &mut Unstructured) -> arbitrary::Result<u32> {
    Ok(match u8::arbitrary(u)? % 4 {
        0 => 0,
        1 => u32::MAX - u8::arbitrary(u)? as u32,
        2 => u8::arbitrary(u)? as u32,
        _ => u32::arbitrary(u)?,
    })
}

fn leases(u: &mut Unstructured) -> arbitrary::Result<Vec<Lease>> {
    let n = u8::arbitrary(u)? % 5;
    (0..n)
        .map(|_| {
            Ok(Lease {
                holder: ["a", "b", "c", "", "worker-1"][u8::arbitrary(u)? as usize % 5].into(),
                until_ms: wide(u)?,
            })
        })
        .collect()
}

fn built_view(u: &mut Unstructured) -> arbitrary::Result<ProviderView> {
    let phase = [Phase::Closed, Phase::HalfOpen, Phase::Open][u8::arbitrary(u)? as usize % 3];
    let failures = (0..u8::arbitrary(u)? % 12).map(|_| wide(u)).collect::<arbitrary::Result<_>>()?;
    let buckets = (0..u8::arbitrary(u)? % 12)
        .map(|_| Ok(Bucket { start_ms: wide(u)?, calls: wide32(u)?, failures: wide32(u)? }))
        .collect::<arbitrary::Result<_>>()?;
    let breaker = BreakerRow {
        phase,
        failures,
        buckets,
        open_until_ms: wide(u)?,
        streak: wide32(u)?,
        trips: wide(u)?,
        probes: leases(u)?,
        successes: wide32(u)?,
        last_failure: Option::<String>::arbitrary(u)?,
        version: wide(u)?,
    };
    let gate = GateRow { tat_us: wide(u)?, closed_until_ms: wide(u)?, version: wide(u)? };
    let in_flight = InFlightRow { leases: leases(u)?, version: wide(u)? };
    let latency = LatencyRow {
        w: (0..u8::arbitrary(u)? % 26).map(|_| wide(u)).collect::<arbitrary::Result<_>>()?,
        t: (0..u8::arbitrary(u)? % 26).map(|_| wide(u)).collect::<arbitrary::Result<_>>()?,
        at_ms: wide(u)?,
        version: wide(u)?,
    };
    let seconds = (0..u8::arbitrary(u)? % 12)
        .map(|_| Ok(Second { s: wide(u)?, calls: wide32(u)?, retries: wide32(u)? }))
        .collect::<arbitrary::Result<_>>()?;
    let budget = BudgetRow { seconds, version: wide(u)? };
    let limit = LimitRow {
        limit: wide32(u)?,
        congested_at_ms: wide(u)?,
        updated_ms: wide(u)?,
        version: wide(u)?,
        plateau: wide32(u)?,
        shares: (0..u8::arbitrary(u)? % 6)
            .map(|k| {
                Ok(Share {
                    holder: if bool::arbitrary(u)? { format!("w{k}\"é") } else { format!("w{k}\u{1f}k{}\"é", k % 2) },
                    slots: wide32(u)?,
                    until_ms: wide(u)?,
                    wants: bool::arbitrary(u)?,
                    rank: u8::arbitrary(u)? % 3,
                    waits_until_ms: wide(u)?,
                    weight: 1 + wide32(u)? % 100,
                    owed: wide(u)? as i64,
                })
            })
            .collect::<arbitrary::Result<_>>()?,
        suspect_ms: wide(u)?,
        accrued_ms: wide(u)?,
    };
    let tokens = TokenRow {
        buckets: (0..u8::arbitrary(u)? % 14).map(|_| Ok((wide(u)?, wide(u)?))).collect::<arbitrary::Result<_>>()?,
        input_buckets: (0..u8::arbitrary(u)? % 14)
            .map(|_| Ok((wide(u)?, wide(u)?)))
            .collect::<arbitrary::Result<_>>()?,
        output_buckets: (0..u8::arbitrary(u)? % 14)
            .map(|_| Ok((wide(u)?, wide(u)?)))
            .collect::<arbitrary::Result<_>>()?,
        period_start_ms: wide(u)?,
        spent_micros: wide(u)?,
        limits: bool::arbitrary(u)?.then_some(Limits {
            per_minute: Option::<u64>::arbitrary(u)?,
            input_per_minute: Option::<u64>::arbitrary(u)?,
            output_per_minute: Option::<u64>::arbitrary(u)?,
            spend_cap_micros: Option::<u64>::arbitrary(u)?,
            period: if bool::arbitrary(u)? { Period::Month } else { Period::Day },
        }),
        version: wide(u)?,
    };
    let spend = SpendRow {
        held: (0..u8::arbitrary(u)? % 6).map(|_| Ok((wide(u)?, wide(u)?))).collect::<arbitrary::Result<_>>()?,
        version: wide(u)?,
    };
    // Lists of unequal length too: a row from the store may hold them.
    let pace = resilient_engine::facts::pace_row::PaceRow {
        ms: (0..u8::arbitrary(u)? % 12).map(|_| wide(u)).collect::<arbitrary::Result<_>>()?,
        at_ms: (0..u8::arbitrary(u)? % 12).map(|_| wide(u)).collect::<arbitrary::Result<_>>()?,
        cut_ms: wide(u)?,
        cut_at_ms: wide(u)?,
        gap_ms: (0..u8::arbitrary(u)? % 12).map(|_| wide(u)).collect::<arbitrary::Result<_>>()?,
        gap_at_ms: (0..u8::arbitrary(u)? % 12).map(|_| wide(u)).collect::<arbitrary::Result<_>>()?,
        version: wide(u)?,
    };
    // Lists of any length (a row from the store may hold a partial three).
    let quota = QuotaRow {
        counts: (0..u8::arbitrary(u)? % 10).map(|_| wide(u)).collect::<arbitrary::Result<_>>()?,
        held: (0..u8::arbitrary(u)? % 10).map(|_| wide(u)).collect::<arbitrary::Result<_>>()?,
        version: wide(u)?,
    };
    Ok(ProviderView { breaker, gate, in_flight, latency, budget, limit, tokens, spend, pace, quota })
}

fn check_breaker(row: &BreakerRow, k: &Knobs) {
    let (p, holder, now) = (k.policy(), k.holder(), k.now_ms);
    let a = breaker::admit(row, &p, now, &holder);
    let still_open = row.phase == Phase::Open && now < row.open_until_ms;
    match &a.decision {
        Admission::Skip { until_ms, .. } if still_open => {
            assert_eq!(*until_ms, row.open_until_ms, "open: skip until it ends")
        }
        Admission::Skip { until_ms, .. } => {
            assert!(p.half_open_probes > 0 && *until_ms > now, "half-open busy until {until_ms}, now {now}: {row:?}");
        }
        Admission::Call | Admission::Probe { .. } => {
            assert!(!still_open, "admitted at {now} into a breaker open until {}", row.open_until_ms)
        }
    }
    if let Admission::Probe { lease_until_ms } = a.decision {
        assert_eq!(lease_until_ms, now.saturating_add(p.probe_lease_ms));
        match &a.row {
            Some(next) => {
                assert!(
                    next.probes.iter().any(|l| l.holder == holder && l.until_ms == lease_until_ms),
                    "probe lease missing"
                );
                assert!(
                    next.probes.len() as u32 <= p.half_open_probes,
                    "{} probes of {}",
                    next.probes.len(),
                    p.half_open_probes
                );
                assert_ne!(next.phase, Phase::Closed);
            }
            // Only at the very end of u64 is a lease born expired, equal to a dead one stored.
            None => assert!(lease_until_ms <= now, "a probe at {now} took no lease: {row:?}"),
        }
    }
    if let Some(t) = a.transition {
        assert_eq!((t.from, t.to, t.at_ms), (Phase::Open, Phase::HalfOpen, now), "admit only moves open to half-open");
    }
    match &a.row {
        Some(next) => {
            assert_eq!(next.version, row.version.wrapping_add(1), "admit: version rises by one");
            assert_ne!(&BreakerRow { version: row.version, ..next.clone() }, row, "admit: a new version for no change");
        }
        None => assert!(a.transition.is_none(), "admit: a transition without a row"),
    }
    let r = breaker::record(row, &p, now, k.health(), &holder, "503");
    if let Some(t) = r.transition {
        let next = r.row.as_ref().expect("a transition writes its row");
        assert_eq!((t.from, t.at_ms), (row.phase, now));
        assert_eq!(next.phase, t.to);
        assert_ne!(row.phase, Phase::Open, "a late answer never moves an open breaker");
        if t.to == Phase::Open {
            let w = p.open_window(next.streak);
            // With a probe interval: the interval (the open window, where shorter, the first
            // time), to three intervals; without one, the open window to its cap.
            let (low, high) = match p.probe_interval_ms {
                0 => (p.open_ms, p.open_max_ms),
                every => (p.open_ms.min(every), 3 * every),
            };
            assert!(w >= low && w <= high, "open window {w} outside [{low}, {high}]");
            assert_eq!(next.open_until_ms, now.saturating_add(w));
            assert_eq!(next.trips, row.trips.saturating_add(1), "a trip is counted (saturating)");
            assert!(next.probes.is_empty() && next.failures.is_empty() && next.buckets.is_empty());
        }
    }
    if let (Some(next), TripRule::Consecutive) = (&r.row, p.trip) {
        assert!(
            next.failures.len() <= row.failures.len().max(p.threshold as usize),
            "{} failures kept",
            next.failures.len()
        );
    }
    match &r.row {
        Some(next) => {
            assert_eq!(next.version, row.version.wrapping_add(1), "record: version rises by one");
            assert_ne!(
                &BreakerRow { version: row.version, ..next.clone() },
                row,
                "record: a new version for no change"
            );
        }
        None => assert!(r.transition.is_none(), "record: a transition without a row"),
    }
    // The admitted row, recorded on at once (a call that failed immediately) holds too.
    if let Some(admitted) = &a.row {
        let r2 = breaker::record(admitted, &p, now, k.health(), &holder, "ECONNRESET");
        if let Some(next) = &r2.row {
            assert_eq!(next.version, admitted.version.wrapping_add(1));
        }
    }
}

fn check_gate(view: &ProviderView, k: &Knobs) {
    let limit = RateLimit {
        requests: 1 + k.requests % 1_000_000,
        period_ms: 1 + k.period_ms as u64 % 86_400_000,
        burst: 1 + k.burst as u32,
    };
    let now = k.now_ms;
    for l in [None, Some(&limit)] {
        let taken = rate_gate::take(&view.gate, l, now, k.max_wait_ms as u64);
        if !matches!(taken, Take::Wait { .. }) {
            assert!(
                now >= view.gate.closed_until_ms,
                "a slot at {now} from a gate closed until {}",
                view.gate.closed_until_ms
            );
        }
        match &taken {
            Take::Now { row: Some(r) } | Take::Reserved { row: r, .. } => {
                assert!(l.is_some(), "no limit, nothing to write");
                assert_eq!(r.version, view.gate.version.wrapping_add(1), "gate: version rises by one");
                assert_eq!(r.closed_until_ms, view.gate.closed_until_ms);
                assert!(r.tat_us >= view.gate.tat_us && r.tat_us >= now.saturating_mul(1000), "GCRA went back in time");
                // One interval per slot: with no burst, a second slot at the same instant is
                // not free (for any clock short of the end of u64 microseconds).
                if limit.burst == 1 && now < u64::MAX / 2000 && r.tat_us < u64::MAX {
                    assert!(
                        !matches!(rate_gate::take(r, l, now, k.max_wait_ms as u64), Take::Now { .. }),
                        "two free slots at {now}"
                    );
                }
            }
            Take::Now { row: None } => assert!(l.is_none()),
            Take::Wait { until_ms, .. } => assert!(*until_ms > now, "wait until {until_ms}, already {now}"),
        }
        if let Take::Reserved { at_ms, .. } = taken {
            assert!(
                at_ms > now && at_ms - now <= k.max_wait_ms as u64,
                "reserved {at_ms} at {now}, reach {}",
                k.max_wait_ms
            );
        }
    }
    match rate_gate::close(&view.gate, k.close_until_ms) {
        Some(r) => {
            assert!(k.close_until_ms > view.gate.closed_until_ms);
            assert_eq!(r.version, view.gate.version.wrapping_add(1), "close: version rises by one");
            assert_eq!(r.closed_until_ms, k.close_until_ms);
        }
        None => assert!(k.close_until_ms <= view.gate.closed_until_ms),
    }
}

fn check_in_flight(view: &ProviderView, k: &Knobs) {
    let holder = k.holder();
    let cap = 1 + k.cap as u32 % 8;
    match in_flight::acquire(&view.in_flight, cap, &holder, k.now_ms, k.probe_lease_ms as u64) {
        Acquire::Granted { row } => {
            assert_eq!(row.version, view.in_flight.version.wrapping_add(1), "acquire: version rises by one");
            assert!(row.leases.len() as u32 <= cap);
            assert!(row
                .leases
                .iter()
                .any(|l| l.holder == holder && l.until_ms == k.now_ms.saturating_add(k.probe_lease_ms as u64)));
        }
        Acquire::Full { until_ms, .. } => {
            assert!(until_ms > k.now_ms, "full until {until_ms}, now {}", k.now_ms);
            assert!(view.in_flight.leases.iter().filter(|l| l.until_ms > k.now_ms).count() as u32 >= cap);
        }
    }
    if let Some(row) = in_flight::release(&view.in_flight, &holder) {
        assert_eq!(row.version, view.in_flight.version.wrapping_add(1), "release: version rises by one");
        assert!(row.leases.iter().all(|l| l.holder != holder));
    }
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs::arbitrary(&mut Unstructured::new(&[])).expect("arbitrary from no bytes")
    }
}
