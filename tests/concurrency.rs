//! Item Concurrency *Auto* and waiting in line, end to end in virtual time: one execution's items
//! in one pool against a vendor that takes K calls at once and answers 429 + `Retry-After: 1`
//! above that, a healthy vendor, and a dead one. Every item is a real `ItemMachine`; the store
//! is the in-memory stand-in; the vendor counts what it is sent.
mod common;

use common::execution::{self, Ends, Reply, Vendors};
use common::{chain, retry_after, status, Store};
use resilient_engine::config::Chain;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{ItemMachine, Step};
use resilient_engine::limits::pool::Pool;
use resilient_engine::limits::seat::Seats;
use resilient_engine::rng::Rng;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

/// A vendor: `capacity` calls at once (`None`: any number), each answered after `latency_ms`;
/// above capacity a 429 with `Retry-After: 1` at once. `dead`: every call a 500.
struct Vendor {
    capacity: Option<u32>,
    latency_ms: u64,
    dead: bool,
    in_flight: u32,
    calls: u32,
    rejected_429: u32,
    most_at_once: u32,
}

impl Vendor {
    fn new(capacity: Option<u32>, latency_ms: u64, dead: bool) -> Vendor {
        Vendor { capacity, latency_ms, dead, in_flight: 0, calls: 0, rejected_429: 0, most_at_once: 0 }
    }
}

impl Vendors for Vendor {
    fn call(&mut self, _: usize, _: u64) -> Reply {
        self.calls += 1;
        let reply = |after_ms, outcome, held| Reply { after_ms, outcome, usage: None, held };
        if self.dead {
            return reply(self.latency_ms, status(500), false);
        }
        if self.capacity.is_some_and(|k| self.in_flight >= k) {
            self.rejected_429 += 1;
            return reply(5, retry_after(429, "1"), false);
        }
        self.in_flight += 1;
        self.most_at_once = self.most_at_once.max(self.in_flight);
        reply(self.latency_ms, status(200), true)
    }

    fn replied(&mut self, _: usize, reply: &Reply) {
        if reply.held {
            self.in_flight -= 1;
        }
    }
}

fn run(chain: &Arc<Chain>, vendor: &mut Vendor, items: usize, ceiling: u32) -> Ends {
    run_on(chain, vendor, items, ceiling, &mut Store::new(chain.providers.len()), 0)
}

/// One execution from `start` on `store` (shared with the fleet's other executions).
fn run_on(chain: &Arc<Chain>, vendor: &mut Vendor, items: usize, ceiling: u32, store: &mut Store, start: u64) -> Ends {
    let pool = Rc::new(RefCell::new(Pool::new(chain, ceiling)));
    // Where the chain bounds the fleet (Call Chain 2.1's default), this process's seats.
    let seats = chain.fleet_limit.then(|| Rc::new(RefCell::new(Seats::new("worker".into(), chain.providers.len()))));
    let mut machines: Vec<ItemMachine> = (0..items)
        .map(|i| {
            let mut m =
                ItemMachine::new(chain.clone(), start, format!("exec{start}:{i}"), vec![], Rng::seeded(i as u64 + 1));
            m.join(pool.clone());
            if let Some(s) = &seats {
                m.seat(s.clone());
            }
            m
        })
        .collect();
    execution::run(chain, &mut machines, store, start, vendor)
}

fn in_line() -> Arc<Chain> {
    chain(&["vendor"], |c| c.wait_in_line = Some(true))
}

#[test]
fn a_vendor_that_takes_k_calls_at_once_serves_every_item_with_few_429s_near_the_ideal_time() {
    for k in [4u32, 16] {
        let mut vendor = Vendor::new(Some(k), 250, false);
        let t = run(&in_line(), &mut vendor, 400, 256);
        let ideal = 400 * 250 / u64::from(k);
        let share = f64::from(vendor.rejected_429) / f64::from(vendor.calls);
        println!(
            "K={k}: {} served, {} deferred, {} calls, {} answered 429 ({:.1} %), {} ms (ideal {ideal} ms)",
            t.done,
            t.deferred,
            vendor.calls,
            vendor.rejected_429,
            share * 100.0,
            t.ended_at
        );
        assert_eq!((t.done, t.deferred, t.failed), (400, 0, 0), "K={k}");
        assert!(share <= 0.10, "K={k}: {:.1} % of calls met a 429", share * 100.0);
        assert!(t.ended_at <= 2 * ideal, "K={k}: {} ms, ideal {ideal} ms", t.ended_at);
    }
}

#[test]
fn a_batch_longer_than_an_items_budget_is_served_whole_each_budget_counting_from_its_admission() {
    // 2,000 items at a vendor taking 4 at once in 250 ms: 125 s at best, past the 60 s budget.
    let mut vendor = Vendor::new(Some(4), 250, false);
    let t = run(&in_line(), &mut vendor, 2_000, 256);
    println!("2000 items, K=4: {} served, {} deferred in {} ms", t.done, t.deferred, t.ended_at);
    assert_eq!((t.done, t.deferred, t.failed), (2_000, 0, 0), "none spent its budget in its own line");
    assert!(t.ended_at > 60_000);
}

/// The same behind the fleet's limit (Call Chain 2.2's defaults): an item that met a 429 waits
/// its turn at the limit again ahead of the items waiting for their first call. Its budget runs
/// while theirs waits with them; when whoever looked first took a freed slot, one such item in
/// a few hundred waited out its budget behind the whole batch and was deferred (real n8n).
#[test]
fn behind_the_fleets_limit_an_item_that_met_a_429_goes_before_the_batch_and_none_is_deferred() {
    let fleet = chain(&["vendor"], |c| {
        c.wait_in_line = Some(true);
        c.fleet_limit = Some(true);
    });
    let mut vendor = Vendor::new(Some(4), 250, false);
    let t = run(&fleet, &mut vendor, 2_000, 256);
    println!(
        "2000 items, K=4, the fleet's limit: {} served, {} deferred, {} answered 429, in {} ms",
        t.done, t.deferred, vendor.rejected_429, t.ended_at
    );
    assert!(vendor.rejected_429 > 0, "some items met a 429");
    assert_eq!((t.done, t.deferred, t.failed), (2_000, 0, 0));
}

#[test]
fn a_healthy_vendor_gets_many_calls_at_once_after_a_few_round_trips() {
    let mut vendor = Vendor::new(None, 250, false);
    let t = run(&in_line(), &mut vendor, 1000, 256);
    println!("healthy: {} served in {} ms, at most {} at once", t.done, t.ended_at, vendor.most_at_once);
    assert_eq!(t.done, 1000);
    assert_eq!(vendor.most_at_once, 256, "the window reached Max Item Concurrency");
    // One at a time: 250 s. Slow start from 5 reaches 256 in about 6 round trips.
    assert!(t.ended_at < 5_000, "{} ms", t.ended_at);
}

#[test]
fn a_dead_vendor_gets_exactly_the_threshold_and_every_other_item_is_deferred() {
    for latency_ms in [1, 100, 300] {
        let mut vendor = Vendor::new(None, latency_ms, true);
        let chain = chain(&["vendor"], |c| {
            c.wait_in_line = Some(true);
            c.max_attempts = 1;
        });
        let t = run(&chain, &mut vendor, 50, 256);
        assert_eq!(vendor.calls, chain.providers[0].breaker.threshold, "latency {latency_ms} ms");
        assert_eq!(t.done, 0);
        assert_eq!(t.deferred + t.failed, 50);
    }
}

#[test]
fn the_second_execution_starts_from_the_limit_the_first_learned_and_never_overshoots_it() {
    let chain = in_line();
    let mut store = Store::new(1);
    let mut vendor = Vendor::new(Some(4), 250, false);
    let first = run_on(&chain, &mut vendor, 200, 256, &mut store, 0);
    let (first_429, learned) = (vendor.rejected_429, store.views[0].limit.clone());
    assert_eq!(first.done, 200);
    println!("first execution: {first_429} answered 429; the fleet's row: {learned:?}");
    assert!((2..=6).contains(&learned.limit), "the row holds about K: {learned:?}");
    assert!(learned.congested_at_ms > 0, "it met congestion");
    let mut again = Vendor::new(Some(4), 250, false);
    let second = run_on(&chain, &mut again, 200, 256, &mut store, first.ended_at + 1000);
    println!("second execution: {} answered 429, most at once {}", again.rejected_429, again.most_at_once);
    assert_eq!(second.done, 200);
    assert!(again.rejected_429 <= first_429, "{} vs {first_429}", again.rejected_429);
}

#[test]
fn a_healthy_vendors_learned_limit_lets_the_next_execution_skip_slow_start_after_its_first_answer() {
    let chain = in_line();
    let mut store = Store::new(1);
    let first = run_on(&chain, &mut Vendor::new(None, 250, false), 1000, 256, &mut store, 0);
    assert!(store.views[0].limit.limit >= 200, "{:?}", store.views[0].limit);
    let mut vendor = Vendor::new(None, 250, false);
    let start = first.ended_at + 1000;
    let second = run_on(&chain, &mut vendor, 1000, 256, &mut store, start);
    println!("second: {} ms (first {} ms)", second.ended_at - start, first.ended_at);
    assert!(second.ended_at - start < first.ended_at, "no slow start the second time");
}

#[test]
fn a_dead_vendor_still_gets_exactly_the_threshold_whatever_the_fleet_learned_before() {
    let chain = chain(&["vendor"], |c| {
        c.wait_in_line = Some(true);
        c.max_attempts = 1;
    });
    let mut store = Store::new(1);
    let first = run_on(&chain, &mut Vendor::new(None, 250, false), 500, 256, &mut store, 0);
    assert!(store.views[0].limit.limit > 100);
    let mut dead = Vendor::new(None, 100, true);
    let t = run_on(&chain, &mut dead, 50, 256, &mut store, first.ended_at + 1000);
    assert_eq!(dead.calls, chain.providers[0].breaker.threshold);
    assert_eq!(t.done, 0);
}

/// Item Concurrency *Auto*, a dead provider: the items in line when its threshold is spent say
/// what Item Concurrency 1 says of it — its breaker is open — even when the last failure's write
/// lands after they poll again (the row they read still shows the breaker closed).
#[test]
fn items_in_line_when_the_threshold_is_spent_skip_the_provider_as_circuit_open() {
    use resilient_engine::verdict::reason::Reason;
    let chain = chain(&["dead", "spare"], |c| {
        c.wait_in_line = Some(true);
        c.max_attempts = 1;
        c.providers[0].threshold = Some(1);
    });
    let store = Store::new(2);
    let mut items = two_in_one_pool(&chain);
    assert!(matches!(items[0].poll(0, &store.views).unwrap().step, Step::Call { provider: 0, .. }));
    assert!(matches!(items[1].poll(0, &store.views).unwrap().step, Step::Queue { provider: 0, .. }));
    // The 500 spends the threshold; its write is not applied before the line polls again.
    items[0].on_outcome(100, &status(500), &store.views, None, CallEnd::default()).unwrap();
    assert_eq!(items[0].take_wake(), vec![items[1].member()], "the line is woken: nothing will free");
    assert!(matches!(items[1].poll(100, &store.views).unwrap().step, Step::Call { provider: 1, .. }));
    let skip = items[1].report().skipped[0];
    assert_eq!((skip.provider, skip.reason), (0, Reason::CircuitOpen));
    assert!(skip.until_ms >= 100 + chain.providers[0].breaker.open_ms, "until its open window ends: {skip:?}");
    assert_eq!(items[1].counters()[0].rejections, 1, "counted as a rejection, as the open breaker's are");
}

/// Spent on 429s alone (they do not count against the provider's health): its rate gate closed,
/// not its breaker.
#[test]
fn a_threshold_spent_on_429s_alone_skips_the_provider_as_rate_limited() {
    use resilient_engine::verdict::reason::Reason;
    let chain = chain(&["busy", "spare"], |c| {
        c.wait_in_line = Some(true);
        c.max_attempts = 1;
        c.providers[0].threshold = Some(1);
    });
    let store = Store::new(2);
    let mut items = two_in_one_pool(&chain);
    items[0].poll(0, &store.views).unwrap();
    items[1].poll(0, &store.views).unwrap();
    items[0].on_outcome(100, &retry_after(429, "1"), &store.views, None, CallEnd::default()).unwrap();
    items[0].take_wake();
    items[1].poll(100, &store.views).unwrap();
    assert_eq!(items[1].report().skipped[0].reason, Reason::RateLimited);
}

/// Call Chain 2.1's defaults bound the fleet's calls too (its learned limit): on a healthy vendor
/// that limit must grow as fast as the execution's window, or it costs round trips the window
/// would not (measured in n8n: 100 items in rounds of 5, 5, 20, 20, 20, 30).
#[test]
fn on_a_healthy_vendor_the_fleets_limit_costs_no_round_trips_beside_the_window() {
    for items in [100usize, 1000] {
        let window_only = run(&in_line(), &mut Vendor::new(None, 300, false), items, 256);
        let fleet = chain(&["vendor"], |c| {
            c.wait_in_line = Some(true);
            c.fleet_limit = Some(true);
        });
        let with_fleet = run(&fleet, &mut Vendor::new(None, 300, false), items, 256);
        println!(
            "{items} items at 300 ms: {} ms with the window alone, {} ms with the fleet's limit too",
            window_only.ended_at, with_fleet.ended_at
        );
        assert_eq!((window_only.done, with_fleet.done), (items as u32, items as u32));
        assert!(with_fleet.ended_at <= window_only.ended_at + 300, "{items}: one round trip at most more");
    }
}

/// An item handed back at once (the store is unavailable and the node fails closed) with a call
/// out gives its slot of the execution's window back: the next item in line is not left waiting
/// for a slot nobody will free.
#[test]
fn an_item_deferred_at_once_gives_its_window_slot_back() {
    use resilient_engine::verdict::reason::Reason;
    let chain = chain(&["vendor"], |c| {
        c.wait_in_line = Some(true);
        c.providers[0].threshold = Some(1);
    });
    let store = Store::new(1);
    let mut items = two_in_one_pool(&chain);
    assert!(matches!(items[0].poll(0, &store.views).unwrap().step, Step::Call { .. }));
    assert!(matches!(items[1].poll(0, &store.views).unwrap().step, Step::Queue { .. }));
    items[0].defer_now(10, Reason::StoreUnavailable);
    assert!(matches!(items[1].poll(10, &store.views).unwrap().step, Step::Call { .. }), "its slot came back");
}

/// Two items of one execution in one pool (Item Concurrency *Auto*).
fn two_in_one_pool(chain: &Arc<Chain>) -> Vec<ItemMachine> {
    let pool = Rc::new(RefCell::new(Pool::new(chain, 256)));
    (0..2)
        .map(|i| {
            let mut m = ItemMachine::new(chain.clone(), 0, format!("e:{i}"), vec![], Rng::seeded(i + 1));
            m.join(pool.clone());
            m
        })
        .collect()
}

/// Queue mode (Call Chain 2.1's defaults): 400 executions of one item each, on two workers
/// running 10 at once, every execution its own window, each worker its own seats on the fleet's
/// row. Only the fleet's limit bounds the 20; a 429 it meets while learning the vendor's K must
/// not spend the item's attempts (real n8n: a few in 400 deferred `attempts_exhausted`).
#[test]
fn in_queue_mode_one_item_executions_behind_the_fleets_limit_are_all_served() {
    use common::execution::Slots;
    let fleet = chain(&["vendor"], |c| {
        c.wait_in_line = Some(true);
        c.fleet_limit = Some(true);
    });
    for seed in 0..20u64 {
        let mut vendor = Vendor::new(Some(4), 250, false);
        let workers: Vec<_> = (0..2).map(|w| Rc::new(RefCell::new(Seats::new(format!("w{w}"), 1)))).collect();
        let mut machines: Vec<ItemMachine> = (0..400)
            .map(|i| {
                let mut m = ItemMachine::new(fleet.clone(), 0, format!("e{i}:0"), vec![], Rng::seeded(seed * 1000 + i));
                m.join(Rc::new(RefCell::new(Pool::new(&fleet, 256))));
                m.seat(workers[i as usize % 2].clone());
                m
            })
            .collect();
        let slots = Slots {
            worker: (0..400).map(|i| i % 2).collect(),
            per_worker: 10,
            execution: (0..400).collect(),
            store: vec![0; 400],
        };
        let t = execution::run_in_slots(&fleet, &mut machines, &mut [Store::new(1)], 0, &mut vendor, &slots);
        println!(
            "seed {seed}: {} served, {} deferred, {} calls, {} answered 429, in {} ms",
            t.done, t.deferred, vendor.calls, vendor.rejected_429, t.ended_at
        );
        for m in &machines {
            if !matches!(m.finished(), Some(Step::Done { .. })) {
                println!("{:?}\n{:?}", m.finished(), m.report().attempts);
            }
        }
        assert_eq!((t.done, t.deferred, t.failed), (400, 0, 0));
    }
}

/// `seats.len()` workers each running one execution of `items` items from `start`, on the fleet's
/// store (`stores[0]`) or, `memory: Some(told)`, worker `w`'s on its memory (`stores[w + 1]`),
/// its items told so or not.
fn fleet_run(
    chain: &Arc<Chain>,
    seats: &[Rc<RefCell<Seats>>],
    items: usize,
    start: u64,
    stores: &mut [Store],
    memory: Option<bool>,
    vendor: &mut Vendor,
) -> Ends {
    let workers = seats.len();
    let pools: Vec<_> = (0..workers).map(|_| Rc::new(RefCell::new(Pool::new(chain, 256)))).collect();
    let mut machines: Vec<ItemMachine> = (0..workers * items)
        .map(|i| {
            let w = i % workers;
            let mut m =
                ItemMachine::new(chain.clone(), start, format!("w{w}-{start}:{i}"), vec![], Rng::seeded(i as u64));
            m.join(pools[w].clone());
            m.seat(seats[w].clone());
            if memory == Some(true) {
                m.on_memory();
            }
            m
        })
        .collect();
    let n = machines.len();
    let slots = execution::Slots {
        worker: (0..n).map(|i| i % workers).collect(),
        per_worker: items,
        execution: (0..n).map(|i| i % workers).collect(),
        store: (0..n).map(|i| memory.map_or(0, |_| i % workers + 1)).collect(),
    };
    execution::run_in_slots(chain, &mut machines, stores, start, vendor, &slots)
}

#[test]
fn when_the_shared_store_fails_each_worker_keeps_to_the_safe_share_it_knew_not_the_whole_limit() {
    let fleet = chain(&["vendor"], |c| {
        c.wait_in_line = Some(true);
        c.fleet_limit = Some(true);
    });
    // Eight workers learn a vendor taking 8 calls at once on the shared store (a call each).
    let learn = |stores: &mut [Store]| {
        let seats: Vec<_> = (0..8).map(|w| Rc::new(RefCell::new(Seats::new(format!("w{w}"), 1)))).collect();
        let mut vendor = Vendor::new(Some(8), 250, false);
        let t = fleet_run(&fleet, &seats, 50, 0, stores, None, &mut vendor);
        assert_eq!(t.done, 400);
        println!("learned: 400 served in {} ms, {} answered 429", t.ended_at, vendor.rejected_429);
        (seats, t.ended_at)
    };
    // Then the store fails: each worker's next 100 items run on its own memory (a row of its own).
    let after = |on_memory: bool| {
        // Store 0 is the fleet's; 1 to 8 the workers' memories.
        let mut stores: Vec<Store> = (0..9).map(|_| Store::new(1)).collect();
        let (seats, ended) = learn(&mut stores);
        let mut vendor = Vendor::new(Some(8), 250, false);
        let t = fleet_run(&fleet, &seats, 100, ended + 1_000, &mut stores, Some(on_memory), &mut vendor);
        let safe: Vec<_> = seats.iter().map(|s| s.borrow().seats[0].safe).collect();
        println!(
            "told {on_memory}: safe shares {safe:?}; at most {} calls at once at the vendor, {} of {} answered 429, \
             {} served, {} deferred, in {} ms",
            vendor.most_at_once,
            vendor.rejected_429,
            vendor.calls,
            t.done,
            t.deferred,
            t.ended_at - ended - 1_000,
        );
        (t, vendor)
    };
    let (blind, blind_vendor) = after(false);
    let (safe, vendor) = after(true);
    // Each worker's memory alone starts at the threshold and learns the vendor's limit as if alone:
    // eight times what it takes is tried (130 of 910 answered 429, 20 items deferred).
    assert!(blind_vendor.rejected_429 > 80, "{}", blind_vendor.rejected_429);
    assert_eq!(blind.done + blind.deferred, 800);
    // Kept to the shares they knew (a call each), the fleet sends what the vendor takes and no
    // more: every item served, in the ideal 100 x 250 ms.
    assert_eq!((safe.done, safe.deferred, safe.failed), (800, 0, 0));
    assert!(vendor.most_at_once <= 8 && vendor.rejected_429 <= 8, "{} 429s", vendor.rejected_429);
}
