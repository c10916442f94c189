//! A gate slot reserved and not taken goes back (issue 56). An item that reserved a later slot of
//! a provider's rate gate and then could not take it (a 429 closed the gate for every worker
//! meanwhile) gives the slot back with its next poll, so the next caller is not pushed a slot
//! further out for a call nobody makes. Before, every such slot was lost: fifty items deferred by
//! a closure left the gate fifty intervals ahead of the clock.
mod common;
use common::*;
use resilient_engine::config::RateLimitConfig;
use resilient_engine::item::{ItemMachine, Step};
use resilient_engine::rng::Rng;

#[test]
fn a_reserved_slot_the_item_cannot_take_is_given_back_with_its_next_poll() {
    let c = chain(&["a"], |c| {
        c.providers[0].rate_limit = Some(RateLimitConfig { requests: 1, period_ms: 1_000, burst: 1 });
    });
    let mut store = Store::new(1);
    // One call takes the slot now; the item behind it reserves the next, at 1 000 ms.
    let mut first = ItemMachine::new(c.clone(), 0, "w:1".into(), Vec::new(), Rng::seeded(1));
    let p = first.poll(0, &store.views).unwrap();
    store.apply(p.writes.as_ref().unwrap());
    let mut second = ItemMachine::new(c.clone(), 10, "w:2".into(), Vec::new(), Rng::seeded(2));
    let p = second.poll(10, &store.views).unwrap();
    assert!(matches!(p.step, Step::Sleep { .. }), "{:?}", p.step);
    store.apply(p.writes.as_ref().unwrap());
    let reserved_tat = store.views[0].gate.tat_us;
    assert_eq!(reserved_tat, 2_000_000, "two slots out: now and at 1 000 ms");

    // A 429 elsewhere closes the gate until 30 s: the second item wakes at its slot and cannot
    // take it.
    store.views[0].gate.closed_until_ms = 30_000;
    let p = second.poll(1_000, &store.views).unwrap();
    assert!(!matches!(p.step, Step::Call { .. }));
    let w = p.writes.expect("the slot is given back with this poll");
    assert_eq!(w.provider, 0);
    assert_eq!(w.gate.as_ref().unwrap().tat_us, 1_000_000, "one interval back, not before now");
    assert_eq!(w.gate.as_ref().unwrap().closed_until_ms, 30_000, "the closure stands");
}

/// A process stalled on its CPU wakes its items late: one woken more than an interval after the
/// slot it reserved takes a slot anew instead of calling at once, so the late calls of a stalled
/// process do not go out together into the vendor's next window (a 429 at 80 % of its quota in
/// the queue-mode smoke run, four lanes on two cores).
#[test]
fn an_item_woken_an_interval_late_for_its_slot_takes_a_slot_anew() {
    let c = chain(&["a"], |c| {
        c.providers[0].rate_limit = Some(RateLimitConfig { requests: 10, period_ms: 1_000, burst: 1 });
    });
    let mut store = Store::new(1);
    let mut first = ItemMachine::new(c.clone(), 0, "w:1".into(), Vec::new(), Rng::seeded(1));
    store.apply(first.poll(0, &store.views).unwrap().writes.as_ref().unwrap());
    let mut late = ItemMachine::new(c.clone(), 0, "w:2".into(), Vec::new(), Rng::seeded(2));
    let mut on_time = ItemMachine::new(c.clone(), 0, "w:3".into(), Vec::new(), Rng::seeded(3));
    for m in [&mut late, &mut on_time] {
        let p = m.poll(0, &store.views).unwrap();
        assert!(matches!(p.step, Step::Sleep { .. }), "{:?}", p.step);
        store.apply(p.writes.as_ref().unwrap());
    }
    assert_eq!(store.views[0].gate.tat_us, 300_000, "slots at 0, 100 and 200 ms");
    // Woken 10 ms late: still its slot.
    assert!(matches!(on_time.poll(210, &store.views).unwrap().step, Step::Call { .. }));
    // Woken 150 ms late (more than the 100 ms interval): a slot anew, after the last reserved.
    let p = late.poll(250, &store.views).unwrap();
    assert_eq!(p.step, Step::Sleep { ms: 50, cause: resilient_engine::item::WaitCause::RateGate }, "{:?}", p.step);
    assert_eq!(p.writes.as_ref().unwrap().gate.as_ref().unwrap().tat_us, 400_000, "no slot given back");
}
