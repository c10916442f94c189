//! Fail over first (issue 24), as scenarios through the engine: on a retryable failure the item
//! moves on at once to another provider admissible now, instead of backing off on the failing
//! one; a provider failed over from is not revisited; the last admissible provider keeps its
//! retries with backoff. Off (Call Chain's default), the engine behaves as before.
mod common;
use common::*;
use resilient_engine::config::Chain;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{ItemMachine, Step, WaitCause};
use resilient_engine::limits::breaker;
use resilient_engine::verdict::outcome::{Health, Outcome};
use resilient_engine::verdict::reason::Reason;
use std::sync::Arc;

/// Issue 24's chain: Model 1 always 500 and Model 2 healthy, breaker threshold 3.
fn issue24(fail_over_first: bool) -> Arc<Chain> {
    chain(&["primary", "fallback"], |c| {
        c.threshold = 3;
        c.fail_over_first = fail_over_first;
    })
}

struct Run {
    primary_calls: usize,
    served_by: Vec<usize>,
    slept_ms: Vec<u64>,
    items: Vec<ItemMachine>,
}

/// Ten items one after the other (batch size 1), sharing the rows; calls take 50 ms.
fn ten_items(chain: &Arc<Chain>, answer: impl Fn(usize) -> Outcome) -> Run {
    let mut store = Store::new(chain.providers.len());
    let mut now = 1_000_000;
    let mut run = Run { primary_calls: 0, served_by: Vec::new(), slept_ms: Vec::new(), items: Vec::new() };
    for item in 0..10 {
        let (end, calls, m) = run_item(chain, &mut store, &mut now, Job::new(item, "w"), |i, _| answer(i), 50);
        run.primary_calls += calls.iter().filter(|(i, _)| *i == 0).count();
        match end {
            Step::Done { provider, .. } => run.served_by.push(provider),
            other => panic!("item {item}: {other:?}"),
        }
        run.slept_ms.push(m.report().slept_ms);
        run.items.push(m);
    }
    run
}

fn dead_primary(i: usize) -> Outcome {
    status(if i == 0 { 500 } else { 200 })
}

#[test]
fn a_dead_primary_costs_exactly_the_threshold_and_no_item_sleeps() {
    let run = ten_items(&issue24(true), dead_primary);
    println!("fail over first: primary calls {}, slept_ms {:?}", run.primary_calls, run.slept_ms);
    assert_eq!(run.primary_calls, 3, "one request from each of the first 3 items, then the breaker is open");
    assert_eq!(run.served_by, [1; 10], "every item served by Model 2");
    assert_eq!(run.slept_ms, [0; 10], "no item sleeps");
    for (k, m) in run.items.iter().enumerate().take(3) {
        let a = &m.report().attempts;
        assert_eq!(a.len(), 2, "item {k}: {a:?}");
        assert_eq!((a[0].provider, a[0].outcome.as_str(), a[0].wait_ms, a[0].wait_cause), (0, "500", 0, None));
        let skip = m.report().skipped.iter().find(|s| s.provider == 0).expect("the primary in the skip list");
        assert_eq!(skip.reason, Reason::FailedOver, "item {k}");
    }
    for m in &run.items[3..] {
        assert_eq!(m.report().skipped[0].reason, Reason::CircuitOpen, "the breaker opened at the third");
    }
}

#[test]
fn off_the_same_items_back_off_on_the_primary_as_before() {
    let run = ten_items(&issue24(false), dead_primary);
    println!("fail over first off: primary calls {}, slept_ms {:?}", run.primary_calls, run.slept_ms);
    assert_eq!(run.primary_calls, 3, "the first item's 3 attempts trip the breaker");
    assert_eq!(run.served_by, [1; 10]);
    let first = run.items[0].report();
    let on_primary: Vec<_> = first.attempts.iter().filter(|a| a.provider == 0).collect();
    assert_eq!(on_primary.len(), 3);
    assert!(on_primary[..2].iter().all(|a| a.wait_cause == Some(WaitCause::Backoff)), "{on_primary:?}");
    assert_eq!(first.slept_ms, on_primary.iter().map(|a| a.wait_ms).sum::<u64>());
    assert!(first.slept_ms > 0);
    assert_eq!(run.slept_ms[1..], [0; 9], "the others skip the open primary");
    // The engine before the option (e82618c) gave exactly these for the same seeds.
    assert_eq!((run.primary_calls, run.slept_ms[0]), (3, 436), "today's counts and sleeps");
}

#[test]
fn a_503_on_the_last_admissible_provider_is_still_retried_with_backoff() {
    let chain = issue24(true);
    let mut store = Store::new(2);
    let mut now = 0;
    let mut fallback = vec![status(503), status(200)].into_iter();
    let (end, calls, m) = run_item(
        &chain,
        &mut store,
        &mut now,
        Job::new(1, "w"),
        |i, _| if i == 0 { status(500) } else { fallback.next().unwrap() },
        50,
    );
    println!("503 then 200 on the fallback: calls {calls:?}, slept_ms {}", m.report().slept_ms);
    assert_eq!(end, Step::Done { provider: 1, name: "fallback".into(), fallback: true, checks: vec![] });
    assert_eq!(calls.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1, 1], "the primary is not revisited");
    let a = &m.report().attempts;
    assert_eq!((a[0].wait_ms, a[0].wait_cause), (0, None), "moved on from the primary at once");
    assert_eq!(a[1].wait_cause, Some(WaitCause::Backoff), "the last admissible provider backs off");
    assert!(m.report().slept_ms > 0 && m.report().slept_ms == a[1].wait_ms);
}

#[test]
fn two_failing_providers_each_tried_once_then_the_last_uses_its_attempts_then_deferred() {
    let chain = chain(&["a", "b"], |c| c.fail_over_first = true);
    let mut store = Store::new(2);
    let mut now = 0;
    let (end, calls, m) = run_item(&chain, &mut store, &mut now, Job::new(2, "w"), |_, _| status(500), 50);
    println!("both failing: calls {calls:?}, slept_ms {}, end {end:?}", m.report().slept_ms);
    assert_eq!(calls.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1, 1, 1], "a once, b its 3 attempts, a never again");
    let waits: Vec<_> = m.report().attempts.iter().map(|a| (a.provider, a.wait_cause)).collect();
    assert_eq!(
        waits,
        [(0, None), (1, Some(WaitCause::Backoff)), (1, Some(WaitCause::Backoff)), (1, None)],
        "no backoff on a, backoff between b's attempts, b's last ends the item"
    );
    let Step::Defer { retry_at_ms, .. } = end else { panic!("{end:?}") };
    assert!(retry_at_ms >= now);
    let reasons: Vec<_> = m.report().skipped.iter().map(|s| (s.provider, s.reason)).collect();
    assert_eq!(reasons, [(0, Reason::FailedOver), (1, Reason::AttemptsExhausted)]);
    assert!(Reason::FailedOver.is_retryable(), "a deferral, not a failure");
}

#[test]
fn three_providers_fail_over_in_order_and_the_last_keeps_its_retries() {
    let chain = chain(&["a", "b", "c"], |c| c.fail_over_first = true);
    let mut store = Store::new(3);
    let mut now = 0;
    let mut c_answers = vec![status(502), Outcome::Error { code: "ECONNRESET".into() }, status(200)].into_iter();
    let (end, calls, m) = run_item(
        &chain,
        &mut store,
        &mut now,
        Job::new(3, "w"),
        |i, _| if i < 2 { status(503) } else { c_answers.next().unwrap() },
        10,
    );
    assert_eq!(end, Step::Done { provider: 2, name: "c".into(), fallback: true, checks: vec![] });
    assert_eq!(calls.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1, 2, 2, 2]);
    let waits: Vec<_> = m.report().attempts.iter().map(|a| a.wait_ms > 0).collect();
    assert_eq!(waits, [false, false, true, true, false]);
}

#[test]
fn with_no_other_provider_admissible_now_the_failing_one_backs_off_as_before() {
    // The fallback's breaker is open (one failure trips it): nothing to move on to.
    let chain = chain(&["primary", "fallback"], |c| {
        c.fail_over_first = true;
        c.providers[1].threshold = Some(1);
    });
    let mut store = Store::new(2);
    let mut now = 0;
    let tripped =
        breaker::record(&store.views[1].breaker, &chain.providers[1].breaker, now, Health::Failure, "x", "500");
    store.views[1].breaker = tripped.row.expect("tripped");
    let mut primary = vec![status(503), status(200)].into_iter();
    let (end, calls, m) = run_item(&chain, &mut store, &mut now, Job::new(5, "w"), |_, _| primary.next().unwrap(), 10);
    assert_eq!(end, Step::Done { provider: 0, name: "primary".into(), fallback: false, checks: vec![] });
    assert_eq!(calls.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 0]);
    assert_eq!(m.report().attempts[0].wait_cause, Some(WaitCause::Backoff));
    assert_eq!(store.views[1].breaker.phase, breaker::Phase::Open, "still open: it was never admissible");
}

#[test]
fn a_retry_after_within_the_cap_moves_on_instead_of_sleeping_and_still_closes_the_gate() {
    let chain = chain(&["primary", "fallback"], |c| c.fail_over_first = true);
    let mut store = Store::new(2);
    let mut now = 10_000;
    let (end, calls, m) = run_item(
        &chain,
        &mut store,
        &mut now,
        Job::new(6, "w"),
        |i, _| if i == 0 { retry_after(429, "5") } else { status(200) },
        0,
    );
    assert_eq!(end, Step::Done { provider: 1, name: "fallback".into(), fallback: true, checks: vec![] });
    assert_eq!(calls.len(), 2);
    assert_eq!((m.report().slept_ms, m.report().attempts[0].wait_ms), (0, 0), "the hint is not slept");
    assert!(m.report().attempts[0].retry_after);
    let skip = m.report().skipped.iter().find(|s| s.provider == 0).unwrap();
    assert_eq!((skip.reason, skip.until_ms), (Reason::FailedOver, 15_000), "until the hint ends");
    assert_eq!(store.views[0].gate.closed_until_ms, 15_000, "the 429 closes the gate for everyone, as before");
    // Off: the same hint is slept on the primary.
    let off = chain_off(&chain);
    let mut store = Store::new(2);
    let mut answers = vec![retry_after(429, "5"), status(200)].into_iter();
    let (_, calls, m) = run_item(&off, &mut store, &mut now, Job::new(6, "w"), |_, _| answers.next().unwrap(), 0);
    assert_eq!(calls.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 0]);
    assert_eq!(m.report().slept_ms, 5_000);
}

#[test]
fn a_retry_after_over_the_cap_closes_the_provider_for_everyone_as_before() {
    let chain = chain(&["slow", "other"], |c| c.fail_over_first = true);
    let mut store = Store::new(2);
    let mut now = 10_000;
    let (end, _, m) = run_item(
        &chain,
        &mut store,
        &mut now,
        Job::new(7, "w"),
        |i, _| if i == 0 { retry_after(503, "3600") } else { status(200) },
        0,
    );
    assert!(matches!(end, Step::Done { provider: 1, .. }));
    assert_eq!(m.report().skipped[0].reason, Reason::RetryAfterExceedsCap);
    assert_eq!(store.views[0].gate.closed_until_ms, 10_000 + 3_600_000);
}

#[test]
fn the_guards_single_admitted_call_is_recorded_as_before() {
    // One call admitted elsewhere never polled the chain: no dry run, the effect is the same.
    let on = chain(&["a", "b"], |c| c.fail_over_first = true);
    let effect = |chain: &Arc<Chain>| {
        let mut m =
            ItemMachine::admitted(chain.clone(), 0, 0, "g".into(), 0, false, resilient_engine::rng::Rng::seeded(1));
        m.on_outcome(5, &status(503), &[], None, CallEnd::default()).unwrap()
    };
    assert_eq!(effect(&on), effect(&chain_off(&on)));
}

fn chain_off(chain: &Arc<Chain>) -> Arc<Chain> {
    Arc::new(Chain { fail_over_first: false, ..(**chain).clone() })
}
