//! Crashes the fuzzers found (cargo fuzz, see fuzz/ and scripts/fuzz.sh), kept as unit tests so
//! they stay fixed. Most came from the `state_decode` target: a stored row is data from outside
//! the engine, and a row written by a buggy or hostile peer may hold any u64 or u32. Counters
//! saturate there; versions wrap (a compare-and-set only needs the new version to differ).
use resilient_engine::item::CallEnd;
use resilient_engine::limits::breaker::{admit, record, Admission, BreakerPolicy, BreakerRow, Bucket, Phase, TripRule};
use resilient_engine::limits::in_flight::{acquire, release, Acquire, InFlightRow};
use resilient_engine::limits::lease::Lease;
use resilient_engine::limits::rate_gate::{close, take, GateRow, RateLimit, Take};
use resilient_engine::verdict::outcome::Health;

#[test]
fn failure_rate_bucket_near_u64_max_does_not_overflow_the_window() {
    // Found: `b.start_ms + p.window_ms` overflowed (panic in debug, wrap in release).
    let policy = BreakerPolicy { trip: TripRule::FailureRate { rate: 0.5, min_calls: 2 }, ..Default::default() };
    let row =
        BreakerRow { buckets: vec![Bucket { start_ms: u64::MAX - 5, calls: 3, failures: 3 }], ..Default::default() };
    let decided = record(&row, &policy, 1_000, Health::Failure, "item-1", "HTTP 500");
    let next = decided.row.expect("a failure is recorded");
    // 3 stored failures + this one, 4 of 4 calls failed: the rule trips, as it would for sane rows.
    assert_eq!(next.last_failure.as_deref(), Some("HTTP 500"));
    assert_eq!(next.trips, 1, "{next:?}");
}

#[test]
fn gate_with_tat_near_u64_max_stays_closed_instead_of_wrapping_open() {
    // Found: `start + t` overflowed when the stored theoretical arrival time was near u64::MAX.
    let limit = RateLimit { requests: 10, period_ms: 1_000, burst: 1 };
    let row = GateRow { tat_us: u64::MAX - 10, ..Default::default() };
    match take(&row, Some(&limit), 1_000, 5_000) {
        Take::Wait { until_ms, .. } => assert!(until_ms > 1_000 + 5_000, "waits past the reach: {until_ms}"),
        other => panic!("a gate booked to the end of time must not admit a call: {other:?}"),
    }
}

#[test]
fn a_reserved_gate_slot_does_not_outlast_a_closure_set_while_waiting_for_it() {
    // Found by the step_machine target: an item that reserved a slot slept towards it; another
    // worker then saw a 429 and closed the gate; on waking the item called anyway, because a
    // reserved slot skipped the gate (and with it the closure).
    use resilient_engine::choose::chain::ProviderView;
    use resilient_engine::config::{ChainConfig, ProviderConfig, RateLimitConfig};
    use resilient_engine::item::{ItemMachine, Step, WaitCause};
    use resilient_engine::limits::rate_gate::close;
    use resilient_engine::rng::Rng;
    use std::sync::Arc;

    let cfg = ChainConfig {
        providers: vec![ProviderConfig {
            name: "p".into(),
            rate_limit: Some(RateLimitConfig { requests: 1, period_ms: 1_000, burst: 1 }),
            ..Default::default()
        }],
        ..Default::default()
    };
    let chain = Arc::new(cfg.validate().unwrap());
    let mut m = ItemMachine::new(chain, 0, "item".into(), vec![], Rng::seeded(1));
    // Another worker took the slot at 0: the next one is at 1000 ms.
    let mut views =
        vec![ProviderView { gate: GateRow { tat_us: 1_000_000, ..Default::default() }, ..Default::default() }];
    let poll = m.poll(0, &views).unwrap();
    assert_eq!(poll.step, Step::Sleep { ms: 1_000, cause: WaitCause::RateGate });
    views[0].gate = poll.writes.unwrap().gate.unwrap();
    // While the item sleeps, a 429 elsewhere closes the gate for 30 s.
    views[0].gate = close(&views[0].gate, 30_500).unwrap();
    let poll = m.poll(1_000, &views).unwrap();
    assert!(!matches!(poll.step, Step::Call { .. }), "called into a closed gate: {:?}", poll.step);
    assert!(matches!(poll.step, Step::Defer { retry_at_ms, .. } if retry_at_ms >= 30_500), "{:?}", poll.step);
}

#[test]
fn half_open_success_count_at_u32_max_saturates() {
    // Found: `next.successes += 1` overflowed on a stored half-open row.
    let policy = BreakerPolicy { half_open_probes: 0, successes_to_close: 1000, ..Default::default() };
    let row = BreakerRow { phase: Phase::HalfOpen, successes: u32::MAX, ..Default::default() };
    let r = record(&row, &policy, 1_000, Health::Success, "item-1", "200");
    let next = r.row.expect("the success closes the breaker");
    assert_eq!(next.phase, Phase::Closed, "u32::MAX successes are at least successes_to_close");
}

#[test]
fn trip_count_at_u64_max_saturates() {
    // Found: `next.trips += 1` overflowed when a breaker with a stored trip count of u64::MAX tripped.
    let policy = BreakerPolicy { threshold: 1, ..Default::default() };
    let row = BreakerRow { trips: u64::MAX, ..Default::default() };
    let next = record(&row, &policy, 1_000, Health::Failure, "item-1", "500").row.expect("it trips");
    assert_eq!((next.phase, next.trips), (Phase::Open, u64::MAX));
    assert_eq!(next.open_until_ms, 1_000 + policy.open_ms);
}

#[test]
fn failure_rate_bucket_counts_at_u32_max_saturate() {
    // Found: `b.calls += 1` and `b.failures += 1` overflowed on the current bucket.
    let policy = BreakerPolicy {
        trip: TripRule::FailureRate { rate: 0.5, min_calls: 2 },
        window_ms: 10_000,
        ..Default::default()
    };
    for (calls, failures) in [(u32::MAX, 0), (u32::MAX, u32::MAX)] {
        let row = BreakerRow { buckets: vec![Bucket { start_ms: 1_000, calls, failures }], ..Default::default() };
        let r = record(&row, &policy, 1_500, Health::Failure, "item-1", "500");
        let next = r.row.expect("a failure is recorded");
        let tripped = failures == u32::MAX;
        assert_eq!(next.phase == Phase::Open, tripped, "{next:?}");
        if !tripped {
            assert_eq!((next.buckets[0].calls, next.buckets[0].failures), (u32::MAX, 1));
        }
    }
}

#[test]
fn row_versions_at_u64_max_wrap_instead_of_panicking() {
    // Found: every `version + 1` (breaker, gate take and close, in-flight acquire and release)
    // overflowed on a stored version of u64::MAX. The new version still differs from the old.
    let policy = BreakerPolicy { half_open_probes: 1, ..Default::default() };
    let breaker = BreakerRow { phase: Phase::Open, open_until_ms: 10, version: u64::MAX, ..Default::default() };
    let a = admit(&breaker, &policy, 20, "item-1");
    assert!(matches!(a.decision, Admission::Probe { .. }));
    assert_eq!(a.row.expect("the probe lease is written").version, 0);

    let gate = GateRow { version: u64::MAX, ..Default::default() };
    let limit = RateLimit { requests: 10, period_ms: 1_000, burst: 1 };
    match take(&gate, Some(&limit), 1_000, 0) {
        Take::Now { row: Some(r) } => assert_eq!(r.version, 0),
        other => panic!("{other:?}"),
    }
    assert_eq!(close(&gate, 5_000).expect("the gate closes").version, 0);

    let slots = InFlightRow { leases: vec![Lease { holder: "other".into(), until_ms: 50_000 }], version: u64::MAX };
    match acquire(&slots, 2, "item-1", 1_000, 10_000) {
        Acquire::Granted { row } => assert_eq!((row.leases.len(), row.version), (2, 0)),
        other => panic!("{other:?}"),
    }
    assert_eq!(release(&slots, "other").expect("its slot is released").version, 0);
}

#[test]
fn a_latency_row_with_more_buckets_than_ours_reads_without_panic() {
    // Found: a stored row of 26 buckets indexed past `BOUNDS_MS` (the state_decode target).
    use resilient_engine::choose::latency::{estimate, record, LatencyRow, BOUNDS_MS};
    let row = LatencyRow { w: vec![u64::MAX; BOUNDS_MS.len() + 2], t: vec![u64::MAX; 3], at_ms: 0, version: 1 };
    let e = estimate(&row, 0).expect("weights read");
    assert!(e.p50_ms <= e.p95_ms);
    assert_eq!(record(&row, 5, 0).w.len(), BOUNDS_MS.len(), "written back in our own shape");
}

#[test]
fn backoffs_within_the_wake_slack_never_add_up_past_the_item_budget() {
    // Found by `step_machine`: with 1 ms backoffs (within WAKE_SLACK_MS) and calls answered at
    // once, a poll at the outcome's time was "woken within the slack" and decided as of the
    // wait's end, but the next outcome came stamped at the earlier time: the item's clock ran
    // back, and its sleeps added up to 85 ms of a 12 ms budget. Its clock now never runs back.
    use resilient_engine::config::{ChainConfig, ProviderConfig};
    use resilient_engine::facts::retry_after::HintHeaders;
    use resilient_engine::item::{ItemMachine, Step};
    use resilient_engine::rng::Rng;
    use resilient_engine::verdict::outcome::Outcome;
    use std::sync::Arc;
    let chain = ChainConfig {
        providers: vec![ProviderConfig { name: "p".into(), ..Default::default() }],
        base_ms: 1,
        cap_ms: 1,
        max_attempts: 100,
        budget_ms: 12,
        deadline_ms: 12,
        threshold: 10_000,
        ..Default::default()
    };
    let chain = Arc::new(chain.validate().unwrap());
    let views = vec![Default::default()];
    let mut m = ItemMachine::new(chain, 0, "item".into(), Vec::new(), Rng::seeded(5));
    // Calls answered at once, and a poll right after each outcome (a sleep within the slack is
    // not waited for): the caller's time moves only when a poll says to sleep.
    let mut now = 0;
    let end = loop {
        match m.poll(now, &views).unwrap().step {
            Step::Call { .. } => {
                m.on_outcome(now, &Outcome::status(503, HintHeaders::default()), &views, None, CallEnd::default())
                    .unwrap();
            }
            Step::Sleep { ms, .. } => now += ms,
            end => break end,
        }
    };
    assert!(m.report().slept_ms <= 12, "slept {} ms of a 12 ms budget ({end:?})", m.report().slept_ms);
}
