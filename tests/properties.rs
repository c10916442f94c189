//! Properties over random inputs: delays within bounds, sleeps within the budget, version
//! discipline, and no panic on any state the store could hand back.
mod common;
use common::*;
use proptest::prelude::*;
use resilient_engine::backoff::{Backoff, Strategy as Jitter};
use resilient_engine::breaker::{admit, record, BreakerPolicy, BreakerRow, Bucket, Phase, TripRule};
use resilient_engine::lease::Lease;
use resilient_engine::outcome::{Health, Outcome};
use resilient_engine::rng::Rng;
use resilient_engine::step::Step;

fn strategy() -> impl proptest::strategy::Strategy<Value = Jitter> {
    prop_oneof![Just(Jitter::FullJitter), Just(Jitter::EqualJitter), Just(Jitter::Decorrelated), Just(Jitter::None)]
}

fn phase() -> impl proptest::strategy::Strategy<Value = Phase> {
    prop_oneof![Just(Phase::Closed), Just(Phase::HalfOpen), Just(Phase::Open)]
}

prop_compose! {
    fn any_row()(phase in phase(), failures in prop::collection::vec(any::<u64>(), 0..8),
                 buckets in prop::collection::vec((any::<u64>(), any::<u32>(), any::<u32>()), 0..12),
                 open_until_ms in any::<u64>(), streak in any::<u32>(), trips in any::<u64>(),
                 probes in prop::collection::vec(("[a-z]{1,3}", any::<u64>()), 0..5),
                 successes in any::<u32>(), version in 0u64..u64::MAX - 1) -> BreakerRow {
        BreakerRow {
            phase, failures, open_until_ms, streak, trips, successes, version, last_failure: None,
            buckets: buckets.into_iter().map(|(start_ms, calls, failures)| Bucket { start_ms, calls, failures }).collect(),
            probes: probes.into_iter().map(|(holder, until_ms)| Lease { holder, until_ms }).collect(),
        }
    }
}

fn health() -> impl proptest::strategy::Strategy<Value = Health> {
    prop_oneof![Just(Health::Success), Just(Health::Failure), Just(Health::Neutral)]
}

fn any_policy() -> impl proptest::strategy::Strategy<Value = BreakerPolicy> {
    (1u32..10, 1u64..100_000, 0u32..4, prop::bool::ANY, 1u32..20).prop_map(
        |(threshold, window_ms, k, rate, min_calls)| BreakerPolicy {
            trip: if rate { TripRule::FailureRate { rate: 0.5, min_calls } } else { TripRule::Consecutive },
            threshold,
            window_ms,
            half_open_probes: k,
            ..Default::default()
        },
    )
}

proptest! {
    #[test]
    fn every_delay_is_within_its_strategys_bounds(s in strategy(), base in 1u64..10_000, extra in 0u64..100_000, n in 0u32..80, prev in 0u64..200_000, seed in any::<u64>()) {
        let b = Backoff { strategy: s, base_ms: base, cap_ms: base + extra };
        let d = b.delay(n, prev, &mut Rng::seeded(seed));
        let (lo, hi) = b.bounds(n);
        prop_assert!(d >= lo && d <= hi, "{d} not in [{lo}, {hi}]");
        prop_assert!(d <= b.cap_ms);
    }

    #[test]
    fn admit_and_record_never_panic_and_version_rises_by_one_iff_changed(row in any_row(), p in any_policy(), now in any::<u64>(), h in health(), holder in "[a-z]{1,3}") {
        let a = admit(&row, &p, now, &holder);
        if let Some(r) = &a.row { prop_assert_eq!(r.version, row.version + 1); prop_assert_ne!(r, &row); }
        let r = record(&row, &p, now, h, &holder, "x");
        match &r.row {
            Some(next) => {
                prop_assert_eq!(next.version, row.version + 1);
                prop_assert_ne!(&BreakerRow { version: row.version, ..next.clone() }, &row);
            }
            None => prop_assert!(r.transition.is_none(), "a transition always changes the row"),
        }
    }

    #[test]
    fn the_sum_of_sleeps_never_exceeds_the_budget(budget in 100i64..20_000, base in 1i64..2_000, seed in any::<u64>(),
                                                  answers in prop::collection::vec(prop_oneof![Just(500u16), Just(503), Just(429), Just(200), Just(404), Just(0)], 1..30)) {
        let chain = chain(&["a", "b"], |c| { c.budget_ms = budget; c.base_ms = base; c.cap_ms = base * 10; c.max_attempts = 5; });
        let mut store = Store::new(2);
        let mut now = 1_000;
        let start = now;
        let mut k = 0;
        let (end, _, m) = run_item(&chain, &mut store, &mut now, Job::new(seed, "w"), |_, _| {
            let s = answers[k % answers.len()]; k += 1;
            if s == 0 { Outcome::Error { code: "ETIMEDOUT".into() } } else { status(s) }
        }, 7);
        prop_assert!(m.report().slept_ms <= budget as u64, "slept {} > budget {budget}", m.report().slept_ms);
        prop_assert!(now - start <= budget as u64 + 7 * 12, "ran {} ms", now - start);
        let ended = matches!(end, Step::Done { .. } | Step::Defer { .. } | Step::Fail { .. });
        prop_assert!(ended);
    }
}
