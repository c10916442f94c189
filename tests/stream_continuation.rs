//! A streamed answer that breaks after part of it reached the caller, finished by another call
//! (`continue_broken_streams`, the chat model 1.1's *On a Broken Stream: Continue*): the next
//! admissible model continues it, at once; alone, the same model if its breaker admits it; a
//! continuation that fails moves on to the next; none left, the item ends `stream_broken` as
//! before. Every item is a real `ItemMachine`; the store is the in-memory stand-in.
mod common;

use common::{chain, status, Store};
use resilient_engine::config::Chain;
use resilient_engine::item::record::record;
use resilient_engine::item::{CallEnd, ItemMachine, Step};
use resilient_engine::rng::Rng;
use resilient_engine::verdict::outcome::Outcome;
use resilient_engine::verdict::reason::Reason;
use std::sync::Arc;

fn streaming(names: &[&str], continue_broken: bool) -> Arc<Chain> {
    chain(names, |c| {
        c.streams = true;
        c.continue_broken_streams = Some(continue_broken);
        for p in &mut c.providers {
            p.idempotent = true;
            p.method = "POST".into();
        }
    })
}

fn item(c: &Arc<Chain>) -> ItemMachine {
    let mut m = ItemMachine::new(c.clone(), 0, "chat:1".into(), Vec::new(), Rng::seeded(1));
    m.stream().unwrap();
    m
}

fn poll(m: &mut ItemMachine, store: &mut Store, now: u64) -> Step {
    let p = m.poll(now, &store.views).unwrap();
    if let Some(w) = &p.writes {
        store.apply(w);
    }
    p.step
}

/// The call out broke after `chars` characters reached the caller.
fn broke(c: &Chain, m: &mut ItemMachine, store: &mut Store, now: u64, chars: u64) {
    let end = CallEnd { usage: None, delivered_chars: Some(chars), longest_gap_ms: None };
    let broken = Outcome::Broken { code: "ECONNRESET".into() };
    let e = m.on_outcome(now, &broken, &store.views, None, end).unwrap();
    if let Some(w) = record(c, &store.views[e.provider], &e, now).writes {
        store.apply(&w);
    }
}

fn answered(c: &Chain, m: &mut ItemMachine, store: &mut Store, now: u64, s: u16) {
    let e = m.on_outcome(now, &status(s), &store.views, None, CallEnd::default()).unwrap();
    if let Some(w) = record(c, &store.views[e.provider], &e, now).writes {
        store.apply(&w);
    }
}

#[test]
fn a_stream_broken_mid_answer_is_continued_by_the_next_model_at_once_and_said_so() {
    let c = streaming(&["first", "second"], true);
    let mut store = Store::new(2);
    let mut m = item(&c);
    assert!(matches!(poll(&mut m, &mut store, 0), Step::Call { provider: 0, continuation: false, .. }));
    broke(&c, &mut m, &mut store, 100, 42);
    // No wait, no deferral: the next model is asked to continue the answer.
    assert!(matches!(poll(&mut m, &mut store, 100), Step::Call { provider: 1, continuation: true, .. }));
    answered(&c, &mut m, &mut store, 300, 200);
    assert!(matches!(m.finished(), Some(Step::Done { provider: 1, fallback: true, .. })));
    let attempts = &m.report().attempts;
    assert_eq!(attempts[0].outcome, "stream_broken:ECONNRESET");
    assert_eq!(attempts[1].continued_after_chars, Some(42), "continued after 42 characters");
    let counters = m.counters();
    assert_eq!((counters[0].calls, counters[0].failures), (1, 1), "the broken model counted against");
    assert_eq!((counters[1].calls, counters[1].failures), (1, 0), "the continuation one call");
}

#[test]
fn alone_the_same_model_continues_if_its_breaker_admits_it_else_the_item_ends_stream_broken() {
    let c = streaming(&["only"], true);
    let mut store = Store::new(1);
    let mut m = item(&c);
    poll(&mut m, &mut store, 0);
    broke(&c, &mut m, &mut store, 100, 10);
    assert!(matches!(poll(&mut m, &mut store, 100), Step::Call { provider: 0, continuation: true, .. }));

    // A breaker of threshold 1: the break opens it, and nothing may continue.
    let c = chain(&["only"], |c| {
        c.streams = true;
        c.continue_broken_streams = Some(true);
        c.threshold = 1;
    });
    let mut store = Store::new(1);
    let mut m = item(&c);
    poll(&mut m, &mut store, 0);
    broke(&c, &mut m, &mut store, 100, 10);
    assert_eq!(poll(&mut m, &mut store, 100), Step::Fail { reason: Reason::StreamBroken });
}

#[test]
fn a_continuation_that_fails_before_its_first_chunk_moves_on_to_the_next_at_once() {
    let c = streaming(&["first", "second", "third"], true);
    let mut store = Store::new(3);
    let mut m = item(&c);
    poll(&mut m, &mut store, 0);
    broke(&c, &mut m, &mut store, 100, 20);
    assert!(matches!(poll(&mut m, &mut store, 100), Step::Call { provider: 1, continuation: true, .. }));
    answered(&c, &mut m, &mut store, 150, 503);
    assert!(matches!(poll(&mut m, &mut store, 150), Step::Call { provider: 2, continuation: true, .. }));
    answered(&c, &mut m, &mut store, 400, 200);
    assert!(matches!(m.finished(), Some(Step::Done { provider: 2, .. })));
    assert_eq!(m.report().attempts[2].continued_after_chars, Some(20));
}

#[test]
fn version_1_keeps_its_promise_the_broken_models_error() {
    let c = streaming(&["first", "second"], false);
    let mut store = Store::new(2);
    let mut m = item(&c);
    poll(&mut m, &mut store, 0);
    broke(&c, &mut m, &mut store, 100, 42);
    assert_eq!(poll(&mut m, &mut store, 100), Step::Fail { reason: Reason::StreamBroken });
}

#[test]
fn continuations_are_bounded_every_model_once_and_one_more() {
    let c = streaming(&["first", "second"], true);
    let mut store = Store::new(2);
    let mut m = item(&c);
    poll(&mut m, &mut store, 0);
    let mut now = 100;
    let mut calls = 0;
    loop {
        broke(&c, &mut m, &mut store, now, 5 * (calls + 1));
        match poll(&mut m, &mut store, now) {
            Step::Call { continuation: true, .. } => calls += 1,
            Step::Fail { reason: Reason::StreamBroken } => break,
            other => panic!("{other:?}"),
        }
        now += 100;
    }
    assert_eq!(calls, 3);
}
