//! Rows read ahead (issue 27): while a call is out, the node reads the next item's rows only when
//! the engine's poll says for how long they may serve, and when to read them again (`read_ahead`). None for a call that
//! takes an in-flight lease (it gives it back) or the half-open probe (it writes its verdict):
//! rows read while either is out are stale by the time the next item would decide on them.
mod common;
use common::*;
use resilient_engine::item::session::Session;
use resilient_engine::item::Step;
use resilient_engine::limits::breaker::{BreakerRow, Phase};
use resilient_engine::rng::Rng;
use resilient_engine::rows::read_ahead::{ReadAhead, READ_AGAIN_AFTER_MS, READ_AHEAD_MAX_AGE_MS};

fn session(max_in_flight: Option<i64>) -> Session {
    let chain = chain(&["a"], |c| c.providers[0].max_in_flight = max_in_flight);
    Session::new(chain, 0, "w:item".into(), Vec::new(), Rng::seeded(1))
}

#[test]
fn a_plain_call_leaves_the_rows_as_they_are_so_the_next_item_may_use_rows_read_meanwhile() {
    let p = session(None).poll_views(1_000, vec![Default::default()]).unwrap();
    assert!(matches!(p.step, Step::Call { probe: false, .. }));
    assert_eq!(p.read_ahead, Some(ReadAhead { serves_ms: READ_AHEAD_MAX_AGE_MS, read_again_ms: READ_AGAIN_AFTER_MS }));
}

#[test]
fn a_call_holding_an_in_flight_lease_writes_at_its_outcome() {
    let p = session(Some(4)).poll_views(1_000, vec![Default::default()]).unwrap();
    assert!(matches!(p.step, Step::Call { .. }));
    assert!(p.writes.is_some(), "the lease is taken at admission");
    assert_eq!(p.read_ahead, None);
}

#[test]
fn the_half_open_probe_writes_its_verdict() {
    let view = resilient_engine::choose::chain::ProviderView {
        breaker: BreakerRow { phase: Phase::Open, open_until_ms: 500, version: 3, ..Default::default() },
        ..Default::default()
    };
    let p = session(None).poll_views(1_000, vec![view]).unwrap();
    assert!(matches!(p.step, Step::Call { probe: true, .. }), "{:?}", p.step);
    assert_eq!(p.read_ahead, None);
}

#[test]
fn a_wait_reads_nothing_ahead() {
    let wait = Step::Sleep { ms: 250, cause: resilient_engine::item::WaitCause::RateGate };
    assert_eq!(resilient_engine::rows::read_ahead::read_ahead(&wait, None), None);
}
