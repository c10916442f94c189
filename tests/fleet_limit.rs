//! The fleet's learned limit through the item machine, as each entry point meets it: Call Chain's
//! items wait in line, the chat model's call goes to the next model, Check Provider's check is
//! "not now" with its `retry_at` and its report gives the slot back; two workers together stay
//! within the limit. Every item is a real `ItemMachine`; the store is the in-memory stand-in.
mod common;

use common::{chain, status, Store};
use resilient_engine::config::Chain;
use resilient_engine::item::record::record;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{ItemMachine, Poll, Step, WaitCause};
use resilient_engine::limits::seat::Seats;
use resilient_engine::rng::Rng;
use resilient_engine::verdict::reason::Reason;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

fn bounded(names: &[&str], wait_in_line: bool) -> Arc<Chain> {
    chain(names, |c| {
        c.fleet_limit = Some(true);
        c.threshold = 2; // the limit starts at 2
        c.wait_in_line = Some(wait_in_line);
    })
}

fn item(chain: &Arc<Chain>, seats: Option<&Rc<RefCell<Seats>>>, n: u64) -> ItemMachine {
    let mut m = ItemMachine::new(chain.clone(), 0, format!("item-{n}"), Vec::new(), Rng::seeded(n));
    if let Some(s) = seats {
        m.seat(s.clone());
    }
    m
}

/// Poll at `now`, writing what the poll says.
fn poll(m: &mut ItemMachine, store: &mut Store, now: u64) -> Poll {
    let p = m.poll(now, &store.views).expect("views match the chain");
    if let Some(w) = &p.writes {
        store.apply(w);
    }
    p
}

fn worker(chain: &Arc<Chain>, name: &str) -> Rc<RefCell<Seats>> {
    Rc::new(RefCell::new(Seats::new(name.into(), chain.providers.len())))
}

#[test]
fn call_chain_items_over_the_limit_wait_in_line_for_their_provider_and_say_they_wait() {
    let c = bounded(&["a", "b"], true);
    let mut store = Store::new(2);
    let seats = worker(&c, "w1");
    let mut items: Vec<ItemMachine> = (0..3).map(|n| item(&c, Some(&seats), n)).collect();
    for m in &mut items[..2] {
        assert!(matches!(poll(m, &mut store, 10).step, Step::Call { provider: 0, .. }));
    }
    let third = poll(&mut items[2], &mut store, 10);
    // Not moved on to "b": it waits its turn at "a", as a full window's item does.
    assert!(matches!(third.step, Step::Sleep { cause: WaitCause::InLine, .. }), "{:?}", third.step);
    let row = &store.views[0].limit;
    assert_eq!((row.limit, row.shares.len()), (2, 1), "two slots, one worker's");
    assert!(row.shares[0].wants || row.shares[0].slots == 2, "{row:?}");
}

#[test]
fn the_chat_models_call_goes_to_the_next_model_when_the_first_models_limit_is_spent() {
    let c = bounded(&["first", "second"], false);
    let mut store = Store::new(2);
    let seats = worker(&c, "w1");
    let mut items: Vec<ItemMachine> = (0..3).map(|n| item(&c, Some(&seats), n)).collect();
    for m in &mut items[..2] {
        assert!(matches!(poll(m, &mut store, 10).step, Step::Call { provider: 0, .. }));
    }
    assert!(matches!(poll(&mut items[2], &mut store, 10).step, Step::Call { provider: 1, .. }));
    let skip = items[2].report().skipped.iter().find(|s| s.provider == 0).expect("first skipped");
    assert_eq!(skip.reason, Reason::ConcurrencyLimit);
}

/// A batch worker holding the whole limit of "first" (Call Chain's line) and a chat worker's
/// call (the chat model 1.2: `wait_for_slot`) on the same provider names.
fn batch_and_chat() -> (Arc<Chain>, Arc<Chain>, Store, Vec<ItemMachine>, ItemMachine) {
    let batch = bounded(&["first", "second"], true);
    let chat = chain(&["first", "second"], |c| {
        c.fleet_limit = Some(true);
        c.threshold = 2;
        c.wait_for_slot = Some(true);
    });
    let mut store = Store::new(2);
    let w1 = worker(&batch, "batch");
    let mut items: Vec<ItemMachine> = (0..2).map(|n| item(&batch, Some(&w1), n)).collect();
    for m in &mut items {
        assert!(matches!(poll(m, &mut store, 10).step, Step::Call { provider: 0, .. }));
    }
    let message = item(&chat, Some(&worker(&chat, "chat")), 9);
    (batch, chat, store, items, message)
}

#[test]
fn a_chat_call_at_a_spent_limit_waits_for_a_slot_and_the_batch_gives_one_back_as_its_call_ends() {
    let (batch, chat, mut store, mut items, mut message) = batch_and_chat();
    assert_eq!(chat.slot_wait_ms, 15_000, "a quarter of the 60 s budget, 15 s at most");
    let waits = poll(&mut message, &mut store, 20);
    assert!(matches!(waits.step, Step::Sleep { cause: WaitCause::InLine, .. }), "{:?}", waits.step);
    let chat_share = store.views[0].limit.shares.iter().find(|s| s.holder == "chat").cloned();
    assert!(chat_share.is_some_and(|s| s.wants), "it says it waits: {:?}", store.views[0].limit);
    // The batch's first call ends: above its fair part (1 of 2) while someone waits, it gives back.
    let eff = items[0].on_outcome(300, &status(200), &store.views, None, CallEnd::default()).unwrap();
    if let Some(w) = &record(&batch, &store.views[0], &eff, 300).writes {
        store.apply(w);
    }
    assert!(matches!(poll(&mut message, &mut store, 320).step, Step::Call { provider: 0, .. }), "the first model");
    assert!(message.report().skipped.is_empty(), "nothing skipped: {:?}", message.report().skipped);
}

#[test]
fn a_chat_call_waits_for_a_slot_a_quarter_of_its_budget_then_moves_on_to_the_next_model() {
    let (_, _, mut store, _, mut message) = batch_and_chat();
    let mut now = 20;
    loop {
        match poll(&mut message, &mut store, now).step {
            Step::Sleep { ms, cause: WaitCause::InLine } => now += ms,
            Step::Call { provider, .. } => {
                assert_eq!(provider, 1, "the next model");
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert!((15_000..15_200).contains(&(now - 20)), "moved on after {} ms", now - 20);
    let skip = message.report().skipped.iter().find(|s| s.provider == 0).expect("first skipped");
    assert_eq!(skip.reason, Reason::ConcurrencyLimit);
}

#[test]
fn a_chat_call_failed_over_from_a_429_goes_back_to_its_first_model_when_the_next_is_down() {
    let c = chain(&["first", "second"], |c| {
        c.wait_for_slot = Some(true);
        c.fail_over_first = true;
    });
    let mut store = Store::new(2);
    let mut m = item(&c, None, 1);
    let mut now = 10;
    let mut called = Vec::new();
    loop {
        let p = poll(&mut m, &mut store, now);
        match p.step {
            Step::Call { provider, .. } => {
                called.push(provider);
                // The first model's 429 (Retry-After: 1), the second down, then the first serves.
                let outcome = match (provider, called.len()) {
                    (0, 1) => common::retry_after(429, "1"),
                    (1, _) => status(503),
                    _ => status(200),
                };
                now += 50;
                let eff = m.on_outcome(now, &outcome, &store.views, None, CallEnd::default()).unwrap();
                if let Some(w) = &record(&c, &store.views[provider], &eff, now).writes {
                    store.apply(w);
                }
            }
            Step::Sleep { ms, .. } => now += ms,
            Step::Done { .. } => break,
            other => panic!("{other:?} after {called:?}"),
        }
    }
    assert_eq!(called.first(), Some(&0));
    assert_eq!(called.last(), Some(&0), "back to the first model: {called:?}");
    assert!(now < 1_000 + 15_000, "within the short wait: {now} ms");
}

#[test]
fn check_provider_is_not_now_with_retry_at_and_its_report_gives_the_slot_back() {
    let c = bounded(&["a"], false);
    let mut store = Store::new(1);
    // Two checks hold the two slots (a share of one call each: no worker's seat).
    let mut checks: Vec<ItemMachine> = (0..2).map(|n| item(&c, None, n)).collect();
    for m in &mut checks {
        assert!(matches!(poll(m, &mut store, 10).step, Step::Call { provider: 0, .. }));
    }
    let mut third = item(&c, None, 2);
    match poll(&mut third, &mut store, 10).step {
        Step::Defer { reason, retry_at_ms } => {
            assert_eq!(reason, Reason::ConcurrencyLimit);
            assert!(retry_at_ms >= 10, "{retry_at_ms}");
        }
        other => panic!("{other:?}"),
    }
    // A report: the ticket's call, admitted elsewhere, answered 200; its share is given back.
    let mut report = ItemMachine::admitted(c.clone(), 20, 10, "item-0".into(), 0, false, Rng::seeded(9));
    let effect = report.on_outcome(20, &status(200), &[], None, CallEnd::default()).unwrap();
    let rec = record(&c, &store.views[0], &effect, 20);
    store.apply(rec.writes.as_ref().expect("the share is given back"));
    assert_eq!(store.views[0].limit.shares.len(), 1, "one check's share left");
    let mut again = item(&c, None, 3);
    assert!(matches!(poll(&mut again, &mut store, 21).step, Step::Call { provider: 0, .. }));
}

#[test]
fn two_workers_together_stay_within_the_limit() {
    let c = bounded(&["a"], true);
    let mut store = Store::new(1);
    let (w1, w2) = (worker(&c, "w1"), worker(&c, "w2"));
    let mut items: Vec<ItemMachine> = (0..10).map(|n| item(&c, Some(if n % 2 == 0 { &w1 } else { &w2 }), n)).collect();
    // The calls out: (item, when sent). Each answers 200 after 30 ms.
    let mut out: Vec<(usize, u64)> = Vec::new();
    let mut most = 0;
    for now in (10..2_000).step_by(10) {
        let due: Vec<usize> = out.iter().filter(|&&(_, at)| now >= at + 30).map(|&(k, _)| k).collect();
        for k in due {
            let eff = items[k].on_outcome(now, &status(200), &store.views, None, CallEnd::default()).unwrap();
            let rec = record(&c, &store.views[0], &eff, now);
            if let Some(w) = &rec.writes {
                store.apply(w);
            }
            out.retain(|&(x, _)| x != k);
        }
        for (k, m) in items.iter_mut().enumerate() {
            if out.iter().any(|&(x, _)| x == k) || m.finished().is_some() {
                continue;
            }
            if let Step::Call { .. } = poll(m, &mut store, now).step {
                out.push((k, now));
            }
        }
        most = most.max(out.len() as u32);
        let limit = store.views[0].limit.limit;
        assert!(out.len() as u32 <= limit, "{} out, limit {limit}", out.len());
    }
    assert!(items.iter().all(|m| m.served()), "every item served");
    assert!(most >= 2, "the limit was used: {most}");
}

#[test]
fn a_chat_at_its_defaults_through_a_minute_long_outage_never_waits_on_its_first_models_cut_limit() {
    // The chat model 1.2's switches: its first model answers 503 (Retry-After: 1) for 60 s.
    let c = chain(&["first", "second"], |c| {
        c.fleet_limit = Some(true);
        c.wait_for_slot = Some(true);
        c.fail_over_first = true;
        c.probe_interval_ms = Some(10_000);
    });
    let mut store = Store::new(2);
    let seats = worker(&c, "chat");
    let mut served_by = Vec::new();
    for k in 0..25u64 {
        let start = k * 4_000;
        let mut m = ItemMachine::new(c.clone(), start, format!("message-{k}"), Vec::new(), Rng::seeded(k));
        m.seat(seats.clone());
        let mut now = start;
        loop {
            match poll(&mut m, &mut store, now).step {
                Step::Call { provider, .. } => {
                    now += 100;
                    let outcome =
                        if provider == 0 && now < 60_000 { common::retry_after(503, "1") } else { status(200) };
                    let eff = m.on_outcome(now, &outcome, &store.views, None, CallEnd::default()).unwrap();
                    if let Some(w) = &record(&c, &store.views[provider], &eff, now).writes {
                        store.apply(w);
                    }
                    seats.borrow_mut().seats[provider].end(resilient_engine::limits::concurrency::Signal::Neutral);
                }
                Step::Sleep { ms, .. } => now += ms,
                Step::Done { provider, .. } => {
                    served_by.push(provider);
                    break;
                }
                other => panic!("message {k}: {other:?}"),
            }
        }
        assert!(now - start < 2_000, "message {k} took {} ms", now - start);
        // The root node is done with the model: the process gives its shares back (`leave`).
        for view in &mut store.views {
            if let Some(row) = resilient_engine::limits::fleet_limit::leave(&view.limit, "chat", now) {
                view.limit = row;
            }
        }
    }
    assert_eq!(served_by.last(), Some(&0), "the first model again after its recovery: {served_by:?}");
}
