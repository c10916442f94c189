//! Rows read ahead (issue 27): while a call is out, the node reads the next item's rows only when
//! the engine says this call's record will not write whatever its outcome. A call that takes an
//! in-flight lease gives it back, and the half-open probe writes its verdict: rows read while
//! either is out are stale by the time the next item would decide on them.
mod common;
use common::*;
use resilient_engine::breaker::{BreakerRow, Phase};
use resilient_engine::rng::Rng;
use resilient_engine::session::Session;
use resilient_engine::step::Step;

fn session(max_in_flight: Option<i64>) -> Session {
    let chain = chain(&["a"], |c| c.providers[0].max_in_flight = max_in_flight);
    Session::new(chain, 0, "w:item".into(), Vec::new(), Rng::seeded(1))
}

#[test]
fn a_plain_call_leaves_the_rows_as_they_are_so_the_next_item_may_use_rows_read_meanwhile() {
    let p = session(None).poll_views(1_000, vec![Default::default()]).unwrap();
    assert!(matches!(p.step, Step::Call { probe: false, .. }));
    assert!(!p.outcome_writes);
}

#[test]
fn a_call_holding_an_in_flight_lease_writes_at_its_outcome() {
    let p = session(Some(4)).poll_views(1_000, vec![Default::default()]).unwrap();
    assert!(matches!(p.step, Step::Call { .. }));
    assert!(p.writes.is_some(), "the lease is taken at admission");
    assert!(p.outcome_writes);
}

#[test]
fn the_half_open_probe_writes_its_verdict() {
    let view = resilient_engine::chain::ProviderView {
        breaker: BreakerRow { phase: Phase::Open, open_until_ms: 500, version: 3, ..Default::default() },
        ..Default::default()
    };
    let p = session(None).poll_views(1_000, vec![view]).unwrap();
    assert!(matches!(p.step, Step::Call { probe: true, .. }), "{:?}", p.step);
    assert!(p.outcome_writes);
}
