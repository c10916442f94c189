//! A retry budget shared by the fleet (issue 31), as a scenario through the engine: 40 workers,
//! each sending its items one after the other, against a vendor that answers 30 % of calls with
//! 503 (below the breaker's trip rule: it never opens). Without the budget every failure is
//! retried; with it, retries over any 10 s stay within 20 % of the calls plus 10 a second, the
//! rest of the items are deferred with `retry_budget`, and none is lost.
mod common;
use common::*;
use resilient_engine::config::Chain;
use resilient_engine::item::record::record;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{ItemMachine, Step};
use resilient_engine::rng::Rng;
use resilient_engine::verdict::reason::Reason;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

const WORKERS: usize = 40;
const CALL_MS: u64 = 50;
const RUN_MS: u64 = 60_000;

#[derive(Default, Debug)]
struct Tally {
    calls: u64,
    retries: u64,
    served: u64,
    deferred: u64,
    deferred_for_budget: u64,
    failed: u64,
    /// (time, was a retry) of every call, for the window check.
    log: Vec<(u64, bool)>,
}

fn storm(budget_percent: i64) -> Tally {
    let chain: Arc<Chain> = chain(&["vendor"], |c| {
        c.retry_budget_percent = budget_percent;
        c.base_ms = 20;
        c.cap_ms = 200;
        c.max_attempts = 5;
        // A failure-rate rule the storm stays under: the breaker never opens.
        c.trip_rule = "failure_rate".into();
        c.failure_rate = 0.9;
    });
    let mut store = Store::new(1);
    let mut vendor = Rng::seeded(42);
    let mut tally = Tally::default();
    // (time, worker): each worker's next event; `calling[w]` is set while its call is out.
    let mut events: BinaryHeap<Reverse<(u64, usize)>> = (0..WORKERS).map(|w| Reverse((w as u64, w))).collect();
    let mut machines: Vec<Option<ItemMachine>> = (0..WORKERS).map(|_| None).collect();
    let mut calling: Vec<Option<usize>> = vec![None; WORKERS];
    let mut seed = 0;
    while let Some(Reverse((now, w))) = events.pop() {
        if now > RUN_MS {
            break;
        }
        let m = machines[w].get_or_insert_with(|| {
            seed += 1;
            ItemMachine::new(chain.clone(), now, format!("w{w}:{seed}"), Vec::new(), Rng::seeded(seed))
        });
        if let Some(i) = calling[w].take() {
            let status = if vendor.between(0, 99) < 30 { 503 } else { 200 };
            let effect = m.on_outcome(now, &common::status(status), &store.views, None, CallEnd::default()).unwrap();
            if let Some(wr) = &record(&chain, &store.views[i], &effect, now).writes {
                store.apply(wr);
            }
        }
        let poll = m.poll(now, &store.views).unwrap();
        if let Some(wr) = &poll.writes {
            store.apply(wr);
        }
        match poll.step {
            Step::Call { provider, attempt, .. } => {
                let retry = attempt > 1;
                tally.calls += 1;
                tally.retries += retry as u64;
                tally.log.push((now, retry));
                calling[w] = Some(provider);
                events.push(Reverse((now + CALL_MS, w)));
            }
            Step::Sleep { ms, .. } => events.push(Reverse((now + ms, w))),
            end => {
                match end {
                    Step::Done { .. } => tally.served += 1,
                    Step::Defer { reason, .. } => {
                        tally.deferred += 1;
                        tally.deferred_for_budget += (reason == Reason::RetryBudget) as u64;
                    }
                    _ => tally.failed += 1,
                }
                machines[w] = None;
                events.push(Reverse((now, w)));
            }
        }
    }
    tally
}

/// The most retries any 10 s window held, and the calls of that window.
fn busiest_window(log: &[(u64, bool)]) -> (u64, u64) {
    let mut best = (0, 0);
    for start in (0..RUN_MS).step_by(1_000) {
        let in_window = log.iter().filter(|(t, _)| *t >= start && *t < start + 10_000);
        let (calls, retries) = in_window.fold((0, 0), |(c, r), (_, retry)| (c + 1, r + *retry as u64));
        if retries > best.0 {
            best = (retries, calls);
        }
    }
    best
}

#[test]
fn under_a_thirty_percent_storm_the_budget_bounds_retries_and_loses_no_item() {
    let without = storm(0);
    let with = storm(20);
    for (name, t) in [("without", &without), ("with", &with)] {
        println!(
            "{name} the budget: {} calls, {} retries ({:.2} per first call), {} served, {} deferred ({} for the budget), {} failed",
            t.calls,
            t.retries,
            t.retries as f64 / (t.calls - t.retries) as f64,
            t.served,
            t.deferred,
            t.deferred_for_budget,
            t.failed
        );
    }
    assert!(without.retries as f64 > 0.35 * (without.calls - without.retries) as f64, "the storm is retried");
    assert_eq!(without.deferred_for_budget, 0);
    // With it, no 10 s window holds more retries than 20 % of its calls plus 10 a second, give
    // or take the sampling: calls are counted eight at a time, on one call in eight, so the
    // count of a window of n calls is off by about 8 * sqrt(n / 8); three of those, at 20 %.
    let (retries, calls) = busiest_window(&with.log);
    let allowed = calls / 5 + 100;
    let sampling = (0.2 * 3.0 * 8.0 * (calls as f64 / 8.0).sqrt()) as u64;
    println!(
        "busiest 10 s with the budget: {retries} retries, {calls} calls, {allowed} allowed (± {sampling} sampling)"
    );
    assert!(retries <= allowed + sampling, "{retries} retries in a window of {calls} calls");
    assert!(with.retries < without.retries, "fewer retries");
    assert!(with.deferred_for_budget > 0, "the items the budget held back are deferred, not dropped");
    assert_eq!(with.failed, 0, "nothing fails for the budget");
}
