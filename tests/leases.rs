//! A hold lives as long as the call it covers (issue 56). A streamed call lives until the item's
//! budget ends, not only its deadline: its Max In Flight lease (and its spend hold, and the fleet's
//! share it calls within) must not lapse while its stream still runs, or a second call goes out
//! beside it and the cap is passed. Before, every hold lived the half-open probe's lease: twice
//! the deadline, at least the deadline + 5 s.
mod common;
use common::*;
use resilient_engine::item::{ItemMachine, Step};
use resilient_engine::rng::Rng;

#[test]
fn a_streamed_calls_in_flight_lease_outlives_its_deadline_while_its_stream_may_run() {
    let c = chain(&["a"], |c| {
        c.streams = true;
        c.deadline_ms = 2_000;
        c.first_chunk_deadline_ms = 1_000;
        c.budget_ms = 60_000;
        c.providers[0].max_in_flight = Some(1);
    });
    let mut store = Store::new(1);
    let mut first = ItemMachine::new(c.clone(), 0, "w1:a".into(), Vec::new(), Rng::seeded(1));
    first.stream().unwrap();
    let p = first.poll(0, &store.views).unwrap();
    assert!(matches!(p.step, Step::Call { provider: 0, .. }));
    store.apply(p.writes.as_ref().unwrap());
    // 30 s on, the first call's stream is still running (the item's budget allows 60 s): the
    // probe's lease (7 s here) would have ended long ago.
    let mut second = ItemMachine::new(c.clone(), 30_000, "w2:b".into(), Vec::new(), Rng::seeded(2));
    second.stream().unwrap();
    let p = second.poll(30_000, &store.views).unwrap();
    assert!(!matches!(p.step, Step::Call { .. }), "Max In Flight 1 still held by the stream: {:?}", p.step);
    assert_eq!(c.call_lease_ms(0), 120_000, "twice the stream's life, the item's budget");

    // A call that is not streamed keeps the probe's lease, as before.
    let plain = chain(&["a"], |c| c.deadline_ms = 2_000);
    assert_eq!(plain.call_lease_ms(0), plain.providers[0].breaker.probe_lease_ms);
}
