//! A cancelled execution gives back what its calls hold at once (issue 56): each call out is
//! abandoned, so the next execution does not wait for leases to end. Before, a cancelled call
//! recorded nothing: its Max In Flight lease held the slot for the probe lease (at least the
//! deadline + 5 s), and its window slot stayed taken.
mod common;
use common::*;
use resilient_engine::item::record::record;
use resilient_engine::item::{ItemMachine, Step};
use resilient_engine::limits::pool::Pool;
use resilient_engine::rng::Rng;
use std::cell::RefCell;
use std::rc::Rc;

#[test]
fn a_call_out_when_the_execution_is_cancelled_frees_its_in_flight_slot_and_window_slot_now() {
    let c = chain(&["a"], |c| c.providers[0].max_in_flight = Some(1));
    let mut store = Store::new(1);
    let pool = Rc::new(RefCell::new(Pool::new(&c, 256)));
    let mut m = ItemMachine::new(c.clone(), 0, "w1:x".into(), Vec::new(), Rng::seeded(1));
    m.join(pool.clone());
    let poll = m.poll(0, &store.views).unwrap();
    store.apply(poll.writes.as_ref().expect("the call's lease is written with it"));
    assert!(matches!(poll.step, Step::Call { provider: 0, .. }));
    assert_eq!(store.views[0].in_flight.leases.len(), 1);

    // Another execution finds the cap taken.
    let mut other = ItemMachine::new(c.clone(), 10, "w2:y".into(), Vec::new(), Rng::seeded(2));
    let p = other.poll(10, &store.views).unwrap();
    assert!(!matches!(p.step, Step::Call { .. }), "the cap of 1 is held: {:?}", p.step);

    // The first execution is cancelled: its call out is abandoned and recorded.
    let out = m.cancelled();
    assert_eq!(out.len(), 1, "the one call out");
    for call in out {
        let effect = m.abandon(50, call).unwrap();
        if let Some(w) = record(&c, &store.views[0], &effect, 50).writes {
            store.apply(&w);
        }
    }
    assert!(store.views[0].in_flight.leases.is_empty(), "the lease is given back now, not at its end");
    assert_eq!(pool.borrow().calls_out(), 0, "the window slot is back");

    let mut next = ItemMachine::new(c.clone(), 60, "w3:z".into(), Vec::new(), Rng::seeded(3));
    let p = next.poll(60, &store.views).unwrap();
    assert!(matches!(p.step, Step::Call { provider: 0, .. }), "the next execution calls at once: {:?}", p.step);
}
