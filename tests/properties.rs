//! Properties over random inputs: delays within bounds, sleeps within the budget, version
//! discipline, and no panic on any state the store could hand back.
mod common;
use common::*;
use proptest::prelude::*;
use resilient_engine::config::RateLimitConfig;
use resilient_engine::item::record::record;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{ItemMachine, Step};
use resilient_engine::limits::breaker::{
    admit, record as record_breaker, BreakerPolicy, BreakerRow, Bucket, Phase, TripRule,
};
use resilient_engine::limits::lease::Lease;
use resilient_engine::rng::Rng;
use resilient_engine::verdict::backoff::{Backoff, Strategy as Jitter};
use resilient_engine::verdict::outcome::{Health, Outcome};

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
        let r = record_breaker(&row, &p, now, h, &holder, "x");
        match &r.row {
            Some(next) => {
                prop_assert_eq!(next.version, row.version + 1);
                prop_assert_ne!(&BreakerRow { version: row.version, ..next.clone() }, &row);
            }
            None => prop_assert!(r.transition.is_none(), "a transition always changes the row"),
        }
    }

    /// Drives the item step by step (not through `run_item`) to see every sleep and call: each
    /// sleep ends within the budget, so their sum cannot exceed it; each call starts before the
    /// budget ends with a deadline that ends with it, so the item overruns the budget by at
    /// most the one call in flight (here the harness lets calls take `call_ms` whatever the
    /// deadline). The item's metadata reports the sleeps it took.
    #[test]
    fn the_sum_of_sleeps_never_exceeds_the_budget(budget in 100u64..20_000, base in 1i64..2_000, call_ms in 1u64..400,
                                                  seed in any::<u64>(), gate in prop::option::of((1i64..4, 100i64..5_000)), fail_over_first in any::<bool>(),
                                                  answers in prop::collection::vec(prop_oneof![Just(500u16), Just(503), Just(429), Just(1), Just(200), Just(404), Just(0)], 1..30)) {
        let chain = chain(&["a", "b"], |c| {
            c.budget_ms = budget as i64; c.base_ms = base; c.cap_ms = base * 10; c.max_attempts = 5;
            c.fail_over_first = fail_over_first;
            c.providers[0].rate_limit = gate.map(|(requests, period_ms)| RateLimitConfig { requests, period_ms, burst: 1 });
        });
        let mut store = Store::new(2);
        let start = 1_000;
        let budget_ends = start + budget;
        let mut m = ItemMachine::new(chain.clone(), start, "w".into(), vec![], Rng::seeded(seed));
        let (mut now, mut slept, mut calls) = (start, 0, 0);
        for steps in 0.. {
            prop_assert!(steps < 10_000, "the item never ends");
            let poll = m.poll(now, &store.views).unwrap();
            if let Some(w) = &poll.writes { store.apply(w); }
            match poll.step {
                Step::Sleep { ms, .. } => {
                    prop_assert!(now + ms <= budget_ends, "a {ms} ms sleep {} ms in ends past the budget {budget}", now - start);
                    slept += ms;
                    now += ms;
                }
                Step::Queue { .. } => prop_assert!(false, "an item in no pool is never queued"),
                Step::Call { provider, deadline_ms, .. } => {
                    prop_assert!(now < budget_ends, "a call starts {} ms in, the budget is {budget}", now - start);
                    prop_assert!(now + deadline_ms <= budget_ends, "a {deadline_ms} ms deadline {} ms in outlasts the budget", now - start);
                    let outcome = match answers[calls % answers.len()] {
                        0 => Outcome::Error { code: "ETIMEDOUT".into() },
                        1 => retry_after(429, "1"),
                        s => status(s),
                    };
                    calls += 1;
                    now += call_ms;
                    let effect = m.on_outcome(now, &outcome, &store.views, None, CallEnd::default()).unwrap();
                    if let Some(w) = &record(&chain, &store.views[provider], &effect, now).writes { store.apply(w); }
                    // As the node does: sleep the outcome's wait, then poll.
                    let wake = m.wake_at();
                    if wake > now {
                        prop_assert!(wake <= budget_ends, "a wait to {} ms ends past the budget {budget}", wake - start);
                        slept += wake - now;
                        now = wake;
                    }
                }
                Step::Done { .. } | Step::Defer { .. } | Step::Fail { .. } => break,
                Step::Await { .. } => unreachable!("a chain that does not hedge"),
            }
        }
        prop_assert!(slept <= budget, "slept {slept} ms > budget {budget}");
        prop_assert_eq!(m.report().slept_ms, slept, "the metadata's sleptMs is the sleeps taken");
        prop_assert!(now - start < budget + call_ms, "ran {} ms: past the budget {budget} plus one {call_ms} ms call", now - start);
    }

    /// Fail over first, every provider admissible (no limits, a breaker that never trips): a
    /// provider that failed is left at once for the next one and never called again by the item;
    /// only the last one is retried, with backoff; nothing is slept before it is reached.
    #[test]
    fn fail_over_first_tries_each_provider_once_and_only_the_last_backs_off(seed in any::<u64>(), n in 2usize..5,
            answers in prop::collection::vec(prop_oneof![Just(500u16), Just(503), Just(429), Just(0), Just(200)], 1..20)) {
        let names = ["a", "b", "c", "d"];
        let chain = chain(&names[..n], |c| { c.fail_over_first = true; c.threshold = 10_000; });
        let mut store = Store::new(n);
        let mut now = 1_000;
        let mut k = 0;
        let (end, calls, m) = run_item(&chain, &mut store, &mut now, Job::new(seed, "w"), |_, _| {
            k += 1;
            match answers[(k - 1) % answers.len()] {
                0 => Outcome::Error { code: "ECONNRESET".into() },
                s => status(s),
            }
        }, 10);
        let order: Vec<usize> = calls.iter().map(|c| c.0).collect();
        prop_assert!(order.windows(2).all(|w| w[0] <= w[1]), "never revisited: {order:?}");
        for p in 0..n - 1 {
            prop_assert!(order.iter().filter(|&&i| i == p).count() <= 1, "provider {p} tried at most once: {order:?}");
        }
        for a in &m.report().attempts {
            prop_assert!(a.provider == n - 1 || a.wait_ms == 0, "no wait before the last provider: {a:?}");
        }
        if !matches!(end, Step::Done { .. }) {
            prop_assert_eq!(order.iter().filter(|&&i| i == n - 1).count(), 3, "the last used its attempts");
        }
    }
}
