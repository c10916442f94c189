//! Crashes the fuzzers found (cargo fuzz, see fuzz/), kept as unit tests so they stay fixed.
//! Both came from the `state_decode` target: a stored row is data from outside the engine, and a
//! row written by a buggy or hostile peer may hold any u64.
use resilient_engine::breaker::{record, BreakerPolicy, BreakerRow, Bucket, TripRule};
use resilient_engine::outcome::Health;
use resilient_engine::rate_gate::{take, GateRow, RateLimit, Take};

#[test]
fn failure_rate_bucket_near_u64_max_does_not_overflow_the_window() {
    // Found: `b.start_ms + p.window_ms` overflowed (panic in debug, wrap in release).
    let policy = BreakerPolicy { trip: TripRule::FailureRate { rate: 0.5, min_calls: 2 }, ..Default::default() };
    let row = BreakerRow { buckets: vec![Bucket { start_ms: u64::MAX - 5, calls: 3, failures: 3 }], ..Default::default() };
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
