//! Hedged requests (issue 30) as scenarios through the engine: a call unanswered past the hedge
//! delay gets one more call to the provider the routing chooses next; the first acceptable answer
//! wins, the other call is aborted and handed back (counted as a call, never as a failure, its
//! lease freed, its time a latency sample). A hedge needs what any call needs and waits for none
//! of it; it is never a probe and never sent for a call that is not safe to repeat.
mod common;
use common::*;
use resilient_engine::choose::hedge::CallTag;
use resilient_engine::choose::latency;
use resilient_engine::config::{Chain, ChainConfig, ProviderConfig, RateLimitConfig};
use resilient_engine::item::record::record;
use resilient_engine::item::session::Session;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{Effect, ItemMachine, Poll, Step, WaitCause};
use resilient_engine::limits::breaker::{self, BreakerRow, Phase};
use resilient_engine::rng::Rng;
use resilient_engine::verdict::outcome::Health;
use std::sync::Arc;

fn hedging(names: &[&str], tweak: impl FnOnce(&mut ChainConfig)) -> Arc<Chain> {
    chain(names, |c| {
        c.hedge = "fixed".into();
        c.hedge_delay_ms = 200;
        tweak(c);
    })
}

fn item(chain: &Arc<Chain>, now: u64) -> ItemMachine {
    ItemMachine::new(chain.clone(), now, "w1:item".into(), Vec::new(), Rng::seeded(7))
}

fn tag(step: &Step) -> CallTag {
    match step {
        Step::Call { hedging: Some(t), .. } => *t,
        other => panic!("not a hedging call: {other:?}"),
    }
}

fn provider_of(step: &Step) -> usize {
    match step {
        Step::Call { provider, .. } => *provider,
        other => panic!("not a call: {other:?}"),
    }
}

/// Carry out a poll's writes (as the node's compare-and-set would) and return its step.
fn take(store: &mut Store, poll: Poll) -> Step {
    if let Some(w) = &poll.writes {
        store.apply(w);
    }
    poll.step
}

fn poll(m: &mut ItemMachine, store: &mut Store, now: u64) -> Step {
    let p = m.poll(now, &store.views).unwrap();
    take(store, p)
}

fn hedge(m: &mut ItemMachine, store: &mut Store, now: u64, again: bool) -> Step {
    let p = m.hedge(now, &store.views, again).unwrap();
    take(store, p)
}

fn commit(chain: &Chain, store: &mut Store, effect: &Effect, now: u64) {
    if let Some(w) = &record(chain, &store.views[effect.provider], effect, now).writes {
        store.apply(w);
    }
}

#[test]
fn a_slow_call_gets_a_hedge_to_the_next_provider_whose_answer_wins() {
    let chain = hedging(&["a", "b"], |_| {});
    let mut store = Store::new(2);
    let mut m = item(&chain, 1_000);
    let first = poll(&mut m, &mut store, 1_000);
    assert_eq!(provider_of(&first), 0);
    assert_eq!(tag(&first), CallTag { call: 0, hedge: false, hedge_after_ms: Some(200) });

    // Asked early (a timer a hair ahead is fine, well ahead is not): wait the rest.
    assert_eq!(m.hedge(1_100, &store.views, false).unwrap().step, Step::Await { hedge_after_ms: Some(100) });
    let hedged = hedge(&mut m, &mut store, 1_200, false);
    assert_eq!(provider_of(&hedged), 1, "the provider the routing chooses next");
    assert_eq!(tag(&hedged), CallTag { call: 1, hedge: true, hedge_after_ms: None }, "one hedge per item");
    assert_eq!(m.calls_out(), [0], "the hedge counts as out once the node carries it out (its next crossing)");

    // B answers first: the item is served by the hedge, and A's call is to be aborted.
    let won = m.on_outcome(1_300, &status(200), &store.views, Some(1), CallEnd::default()).unwrap();
    commit(&chain, &mut store, &won, 1_300);
    assert!(matches!(m.finished(), Some(Step::Done { provider: 1, fallback: true, .. })));
    assert_eq!(m.calls_out(), [0], "A's call is still out: abort it");
    let lost = m.abandon(1_310, 0).unwrap();
    assert_eq!((lost.provider, lost.health, lost.label.as_str()), (0, Health::Neutral, "abandoned"));
    commit(&chain, &mut store, &lost, 1_310);
    assert!(store.views[0].breaker.failures.is_empty(), "an aborted call says nothing of its provider's health");
    assert!(m.calls_out().is_empty());

    let c = m.counters();
    assert_eq!((c[0].calls, c[0].failures, c[0].hedges), (1, 0, 0), "A: one call, no failure");
    assert_eq!((c[1].calls, c[1].hedges, c[1].hedge_wins), (1, 1, 1), "B: the hedge, and it won");
    let outcomes: Vec<(&str, bool)> = m.report().attempts.iter().map(|a| (a.outcome.as_str(), a.hedge)).collect();
    assert_eq!(outcomes, [("200", true), ("abandoned", false)]);
}

#[test]
fn the_first_call_answering_first_ends_the_item_and_aborts_the_hedge() {
    let chain = hedging(&["a", "b"], |_| {});
    let mut store = Store::new(2);
    let mut m = item(&chain, 0);
    poll(&mut m, &mut store, 0);
    hedge(&mut m, &mut store, 200, false);
    m.on_outcome(250, &status(200), &store.views, Some(0), CallEnd::default()).unwrap();
    assert_eq!(m.calls_out(), [1]);
    m.abandon(251, 1).unwrap();
    let c = m.counters();
    assert_eq!((c[0].hedge_wins, c[1].hedges, c[1].hedge_wins), (0, 1, 0), "a hedge sent, none won");
    assert!(matches!(m.finished(), Some(Step::Done { provider: 0, fallback: false, .. })));
}

#[test]
fn a_failure_while_the_hedge_is_out_waits_for_the_hedge() {
    let chain = hedging(&["a", "b"], |_| {});
    let mut store = Store::new(2);
    let mut m = item(&chain, 0);
    poll(&mut m, &mut store, 0);
    hedge(&mut m, &mut store, 200, false);
    let failed = m.on_outcome(300, &status(503), &store.views, Some(0), CallEnd::default()).unwrap();
    assert_eq!(failed.health, Health::Failure);
    assert!(m.finished().is_none(), "the hedge may still serve the item");
    assert_eq!(m.calls_out(), [1]);
    m.on_outcome(350, &status(200), &store.views, Some(1), CallEnd::default()).unwrap();
    assert!(matches!(m.finished(), Some(Step::Done { provider: 1, .. })));
    assert!(m.calls_out().is_empty(), "nothing to abort");
    assert_eq!(m.report().slept_ms, 0, "the backoff scheduled while the hedge was out was never waited");
}

#[test]
fn a_backoff_scheduled_while_the_hedge_is_out_counts_only_what_is_left_of_it_once_the_hedge_fails() {
    let chain = hedging(&["a", "b"], |c| c.base_ms = 10_000);
    let mut store = Store::new(2);
    let mut m = item(&chain, 0);
    poll(&mut m, &mut store, 0);
    hedge(&mut m, &mut store, 200, false);
    m.on_outcome(300, &status(503), &store.views, Some(0), CallEnd::default()).unwrap();
    let wake = m.wake_at();
    assert!(wake > 400, "this seed's backoff outlasts the hedge: {wake}");
    // B answers 400: done with B for this item, and no wait of its own.
    m.on_outcome(350, &status(400), &store.views, Some(1), CallEnd::default()).unwrap();
    assert_eq!(m.report().slept_ms, 0);
    // The item waits out what is left of A's backoff, counted once however early it wakes.
    assert_eq!(m.poll(400, &store.views).unwrap().step, Step::Sleep { ms: wake - 400, cause: WaitCause::Backoff });
    m.poll(wake - 5, &store.views).unwrap();
    assert_eq!(m.report().slept_ms, wake - 400);
}

#[test]
fn a_bad_request_on_a_chat_chain_ends_the_item_and_aborts_the_hedge() {
    let chain = hedging(&["a", "b"], |c| c.next_provider_on_client_error = false);
    let mut store = Store::new(2);
    let mut m = item(&chain, 0);
    poll(&mut m, &mut store, 0);
    hedge(&mut m, &mut store, 200, false);
    m.on_outcome(300, &status(400), &store.views, Some(1), CallEnd::default()).unwrap();
    assert!(matches!(m.finished(), Some(Step::Fail { .. })));
    assert_eq!(m.calls_out(), [0]);
}

#[test]
fn no_hedge_for_a_call_that_is_not_safe_to_repeat() {
    let post = |c: &mut ChainConfig| c.providers.iter_mut().for_each(|p| p.method = "POST".into());
    let chain = hedging(&["a", "b"], post);
    let mut store = Store::new(2);
    let step = poll(&mut item(&chain, 0), &mut store, 0);
    assert_eq!(tag(&step).hedge_after_ms, None, "a POST without an idempotency key");
    // With a key it is safe to repeat (the provider deduplicates).
    let mut keyed =
        ItemMachine::new(chain.clone(), 0, "w".into(), vec![Some("k0".into()), Some("k1".into())], Rng::seeded(1));
    assert_eq!(tag(&poll(&mut keyed, &mut store, 0)).hedge_after_ms, Some(200));
}

#[test]
fn a_hedge_is_skipped_not_waited_for_when_no_provider_can_take_it_now() {
    // The only provider's rate gate has no token left (the item's call took it): no sleep, no
    // reserved slot, nothing written.
    let gated = hedging(&["only"], |c| {
        c.providers[0].rate_limit = Some(RateLimitConfig { requests: 1, period_ms: 60_000, burst: 1 });
    });
    let mut store = Store::new(1);
    let mut m = item(&gated, 0);
    poll(&mut m, &mut store, 0);
    let skipped = m.hedge(200, &store.views, false).unwrap();
    assert_eq!((skipped.step, skipped.writes), (Step::Await { hedge_after_ms: None }, None));

    // Its in-flight cap is reached (by the item's own call): skipped.
    let capped = hedging(&["only"], |c| c.providers[0].max_in_flight = Some(1));
    let mut store = Store::new(1);
    let mut m = item(&capped, 0);
    poll(&mut m, &mut store, 0);
    let skipped = m.hedge(200, &store.views, false).unwrap();
    assert_eq!((skipped.step, skipped.writes), (Step::Await { hedge_after_ms: None }, None));
}

#[test]
fn a_hedge_never_takes_a_half_open_probe() {
    // A holds one call at a time (the item's): B, due a probe, is the only other choice.
    let chain = hedging(&["a", "b"], |c| c.providers[0].max_in_flight = Some(1));
    let mut store = Store::new(2);
    // B tripped long ago: its next call would be the half-open probe.
    let p = &chain.providers[1].breaker;
    let mut row = BreakerRow::default();
    for t in 0..p.threshold as u64 {
        if let Some(r) = breaker::record(&row, p, t, Health::Failure, "x", "503").row {
            row = r;
        }
    }
    assert_eq!(row.phase, Phase::Open);
    store.views[1].breaker = row;
    let now = 10_000_000;
    let mut m = item(&chain, now);
    assert_eq!(provider_of(&poll(&mut m, &mut store, now)), 0);
    let skipped = m.hedge(now + 200, &store.views, false).unwrap();
    assert_eq!(skipped.step, Step::Await { hedge_after_ms: None });
    assert_eq!(skipped.writes, None, "no probe claimed");
}

#[test]
fn a_single_provider_is_hedged_on_itself_under_a_lease_of_its_own() {
    let chain = hedging(&["only"], |c| c.providers[0].max_in_flight = Some(2));
    let mut store = Store::new(1);
    let mut m = item(&chain, 0);
    let first = poll(&mut m, &mut store, 0);
    let hedged = hedge(&mut m, &mut store, 200, false);
    assert_eq!((provider_of(&first), provider_of(&hedged)), (0, 0));
    assert!(matches!(hedged, Step::Call { attempt: 2, .. }), "its attempt 2: {hedged:?}");
    assert_eq!(store.views[0].in_flight.leases.len(), 2, "two leases: the item's and the hedge's");
    let won = m.on_outcome(300, &status(200), &store.views, Some(1), CallEnd::default()).unwrap();
    commit(&chain, &mut store, &won, 300);
    let lost = m.abandon(300, 0).unwrap();
    commit(&chain, &mut store, &lost, 300);
    assert!(store.views[0].in_flight.leases.is_empty(), "both leases freed");
}

#[test]
fn the_p95_delay_is_read_from_the_fleets_latency_row() {
    let chain = hedging(&["a", "b"], |c| {
        c.hedge = "p95".into();
        c.hedge_min_ms = 50;
        c.hedge_max_ms = 2_000;
    });
    let mut store = Store::new(2);
    let mut m = item(&chain, 1_000);
    let step = poll(&mut m, &mut store, 1_000);
    assert_eq!(tag(&step).hedge_after_ms, Some(2_000), "nothing measured: the ceiling");
    // Answered calls feed the row (the p95 needs it, whatever the routing).
    let effect = m.on_outcome(1_100, &status(200), &store.views, None, CallEnd::default()).unwrap();
    assert_eq!(effect.latency_ms, Some(100));
    for k in 0..100 {
        store.views[0].latency = latency::record(&store.views[0].latency, 100, 1_100 + k);
    }
    let mut next = item(&chain, 1_200);
    let step = poll(&mut next, &mut store, 1_200);
    assert_eq!(tag(&step).hedge_after_ms, Some(111), "the p95 of calls at 100 ms, read within its bucket");
}

#[test]
fn an_aborted_call_is_a_latency_sample_at_least_as_long_as_it_ran() {
    let chain = hedging(&["a", "b"], |c| c.hedge = "p95".into());
    let mut store = Store::new(2);
    let mut m = item(&chain, 0);
    poll(&mut m, &mut store, 0);
    hedge(&mut m, &mut store, 2_000, false);
    m.on_outcome(2_100, &status(200), &store.views, Some(1), CallEnd::default()).unwrap();
    assert_eq!(m.abandon(2_100, 0).unwrap().latency_ms, Some(2_100));
}

#[test]
fn a_hedge_whose_write_lost_its_race_is_decided_again_on_fresh_rows() {
    let chain = hedging(&["a", "b", "c"], |_| {});
    let mut store = Store::new(3);
    let mut m = item(&chain, 0);
    poll(&mut m, &mut store, 0);
    // The hedge to B is handed out, but its write loses (B opened meanwhile, say): decide again.
    let lost = m.hedge(200, &store.views, false).unwrap();
    assert_eq!(provider_of(&lost.step), 1);
    let p = &chain.providers[1].breaker;
    for t in 0..p.threshold as u64 {
        if let Some(r) = breaker::record(&store.views[1].breaker, p, 100 + t, Health::Failure, "x", "503").row {
            store.views[1].breaker = r;
        }
    }
    let again = hedge(&mut m, &mut store, 201, true);
    assert_eq!((provider_of(&again), tag(&again).call), (2, 2), "C, as call 2: call 1 was never made");
    m.on_outcome(300, &status(200), &store.views, Some(2), CallEnd::default()).unwrap();
    assert_eq!(m.calls_out(), [0], "only A's call is out");
}

#[test]
fn a_chain_that_does_not_hedge_says_nothing_of_it() {
    let chain = chain(&["a", "b"], |_| {});
    let mut store = Store::new(2);
    let mut m = item(&chain, 0);
    let step = poll(&mut m, &mut store, 0);
    assert!(matches!(step, Step::Call { hedging: None, .. }));
    assert!(m.hedge(500, &store.views, false).is_err());
}

#[test]
fn through_the_session_the_end_comes_with_the_last_call_handed_back() {
    let chain = hedging(&["a", "b"], |_| {});
    let mut s = Session::new(chain, 0, "w".into(), Vec::new(), Rng::seeded(3));
    let fresh = || vec![Default::default(); 2];
    s.poll_views(0, fresh()).unwrap();
    let hedge = s.hedge_views(200, fresh(), false).unwrap();
    assert_eq!(tag(&hedge.step).call, 1);
    let won = s.outcome(260, &status(200), Some(1), CallEnd::default()).unwrap();
    assert_eq!((won.abort.as_slice(), won.end.is_none()), ([0].as_slice(), true), "abort A first");
    let handed_back = s.abandon(261, 0).unwrap();
    assert!(handed_back.abort.is_empty());
    let end = handed_back.end.expect("the end, with the last call");
    assert!(matches!(end.step, Step::Done { provider: 1, .. }));
    assert_eq!((end.counters[1].hedges, end.counters[1].hedge_wins, end.counters[0].calls), (1, 1, 1));
}

#[test]
fn the_hedging_settings_are_checked_and_named() {
    let bad = |tweak: fn(&mut ChainConfig)| {
        let mut c = ChainConfig {
            providers: vec![ProviderConfig { name: "a".into(), ..Default::default() }],
            ..Default::default()
        };
        tweak(&mut c);
        c.validate().unwrap_err().field().map(str::to_string)
    };
    assert_eq!(bad(|c| c.hedge = "always".into()).as_deref(), Some("hedge"));
    assert_eq!(
        bad(|c| {
            c.hedge = "p95".into();
            c.hedge_max_ms = 10;
        })
        .as_deref(),
        Some("hedge_max_ms")
    );
    assert_eq!(
        bad(|c| {
            c.hedge = "fixed".into();
            c.max_hedges = 9;
        })
        .as_deref(),
        Some("max_hedges")
    );
    assert_eq!(ChainConfig::default().hedge, "off", "opt-in");
}

#[test]
fn a_streamed_call_is_hedged_until_a_chunk_commits_and_the_first_to_commit_wins() {
    let chain = hedging(&["a", "b"], |c| c.streams = true);
    let mut store = Store::new(2);
    let mut m = item(&chain, 0);
    m.stream().unwrap();
    let first = poll(&mut m, &mut store, 0);
    assert_eq!(tag(&first).hedge_after_ms, Some(200), "hedged while nothing has committed it");
    let hedged = hedge(&mut m, &mut store, 200, false);
    assert_eq!(provider_of(&hedged), 1);
    // B's first text arrives first: A is aborted before any of it reaches the caller.
    assert_eq!(m.commit(Some(1), 30), [0]);
    assert_eq!(m.commit(Some(0), 900), [0], "A committing later lost: none of it may reach the caller");
    assert_eq!(m.commit(Some(1), 31), Vec::<u32>::new(), "asked again: still the one");
    assert_eq!(m.hedge(400, &store.views, false).unwrap().step, Step::Await { hedge_after_ms: None });
    let lost = m.abandon(210, 0).unwrap();
    commit(&chain, &mut store, &lost, 210);
    let done = m.on_outcome(2_000, &status(200), &store.views, Some(1), CallEnd::default()).unwrap();
    commit(&chain, &mut store, &done, 2_000);
    assert!(matches!(m.finished(), Some(Step::Done { provider: 1, .. })));
    assert!(m.calls_out().is_empty());
    assert_eq!(m.counters()[1].hedge_wins, 1);
}

#[test]
fn a_streamed_call_whose_hedge_delay_reaches_its_first_chunk_deadline_is_not_hedged() {
    let chain = hedging(&["a", "b"], |c| {
        c.streams = true;
        c.first_chunk_deadline_ms = 150;
    });
    let mut store = Store::new(2);
    let mut m = item(&chain, 0);
    m.stream().unwrap();
    assert_eq!(tag(&poll(&mut m, &mut store, 0)).hedge_after_ms, None, "the next model takes it at 150 ms anyway");
}

#[test]
fn a_streamed_calls_sample_is_its_time_to_the_first_chunk_in_a_lane_of_its_own() {
    let chain = chain(&["a", "b"], |c| {
        c.streams = true;
        c.routing = "latency".into();
    });
    let mut store = Store::new(2);
    let mut m = item(&chain, 0);
    m.stream().unwrap();
    let step = poll(&mut m, &mut store, 0);
    let i = provider_of(&step);
    assert_eq!(m.commit(None, 120), Vec::<u32>::new(), "one call out: nothing to abort");
    let effect = m.on_outcome(5_000, &status(200), &store.views, None, CallEnd::default()).unwrap();
    assert_eq!((effect.latency_ms, effect.first_chunk), (Some(120), true), "not the 5 s stream");
    commit(&chain, &mut store, &effect, 5_000);
    let row = &store.views[i].latency;
    assert!(row.w.is_empty(), "answers' lane untouched");
    assert_eq!(latency::estimate(&row.first_chunk(), 5_000).unwrap().p50_ms, 160);
}

/// An item of a hedging chain driven as the node drives it, over calls whose latencies and
/// answers are drawn: every call handed out is either answered or abandoned, once; the item
/// ends only with no call out; at most `max_hedges` hedges; a served item has one success.
mod random {
    use super::*;
    use proptest::prelude::*;
    use resilient_engine::verdict::outcome::Outcome;

    /// (latency ms, status) per call handed out, in order; then the same again.
    fn answers() -> impl Strategy<Value = Vec<(u64, u16)>> {
        prop::collection::vec(
            (1u64..3_000, prop_oneof![Just(200u16), Just(500), Just(503), Just(429), Just(400)]),
            1..12,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn every_call_is_answered_or_abandoned_once_and_the_end_waits_for_them(
            draws in answers(), providers in 1usize..4, max_hedges in 1i64..4, delay in 1i64..1_500,
            p95 in any::<bool>(), client_error_stops in any::<bool>(), cap in prop::option::of(1i64..3),
        ) {
            let names: Vec<String> = (0..providers).map(|i| format!("p{i}")).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let chain = hedging(&names, |c| {
                c.hedge = if p95 { "p95".into() } else { "fixed".into() };
                c.hedge_delay_ms = delay;
                c.max_hedges = max_hedges;
                c.base_ms = 10;
                c.cap_ms = 50;
                c.budget_ms = 20_000;
                c.next_provider_on_client_error = !client_error_stops;
                c.providers.iter_mut().for_each(|p| p.max_in_flight = cap);
            });
            let mut store = Store::new(providers);
            let mut m = item(&chain, 0);
            let mut now = 0u64;
            // Calls out: (call, provider, answers at).
            let mut out: Vec<(u32, usize, u64, Outcome)> = Vec::new();
            let mut hedge_at: Option<u64> = None;
            let mut handed = 0usize;
            let draw = |k: usize| draws[k % draws.len()];
            for _ in 0..500 {
                if m.finished().is_some() && out.is_empty() { break; }
                if out.is_empty() {
                    let p = m.poll(now, &store.views).unwrap();
                    if let Some(w) = &p.writes { store.apply(w); }
                    match p.step {
                        Step::Call { provider, hedging: Some(t), .. } => {
                            let (ms, status) = draw(handed);
                            handed += 1;
                            out.push((t.call, provider, now + ms, status_outcome(status)));
                            hedge_at = t.hedge_after_ms.map(|d| now + d);
                        }
                        Step::Sleep { ms, .. } => now += ms,
                        Step::Done { .. } | Step::Defer { .. } | Step::Fail { .. } => break,
                        other => prop_assert!(false, "poll with nothing out gave {other:?}"),
                    }
                    continue;
                }
                // The next event: the earliest answer, or the hedge timer.
                let (k, first) = out.iter().enumerate().min_by_key(|(_, o)| o.2).map(|(k, o)| (k, o.2)).unwrap();
                if let Some(at) = hedge_at.filter(|&at| at < first) {
                    now = at;
                    let p = m.hedge(now, &store.views, false).unwrap();
                    if let Some(w) = &p.writes { store.apply(w); }
                    hedge_at = match p.step {
                        Step::Call { provider, hedging: Some(t), .. } => {
                            prop_assert!(t.hedge);
                            let (ms, status) = draw(handed);
                            handed += 1;
                            out.push((t.call, provider, now + ms, status_outcome(status)));
                            t.hedge_after_ms.map(|d| now + d)
                        }
                        Step::Await { hedge_after_ms } => hedge_after_ms.map(|d| now + d),
                        other => { prop_assert!(false, "a hedge gave {other:?}"); None }
                    };
                    continue;
                }
                now = first;
                let (call, provider, _, outcome) = out.remove(k);
                let effect = m.on_outcome(now, &outcome, &store.views, Some(call), CallEnd::default()).unwrap();
                prop_assert_eq!(effect.provider, provider);
                commit(&chain, &mut store, &effect, now);
                if m.finished().is_some() {
                    for c in m.calls_out() {
                        let e = m.abandon(now, c).unwrap();
                        commit(&chain, &mut store, &e, now);
                        out.retain(|o| o.0 != c);
                    }
                    prop_assert!(out.is_empty(), "every call out was listed");
                    hedge_at = None;
                }
            }
            prop_assert!(m.finished().is_some() && m.calls_out().is_empty(), "ended, nothing out");
            let a = &m.report().attempts;
            prop_assert_eq!(a.len(), handed, "every call handed out answered or abandoned, once");
            prop_assert!(a.iter().filter(|x| x.hedge).count() <= max_hedges as usize, "{:?}", a);
            let c = m.counters();
            prop_assert_eq!(c.iter().map(|x| x.calls as usize).sum::<usize>(), handed);
            for x in &c { prop_assert!(x.hedge_wins <= x.hedges); }
            let wins = a.iter().filter(|x| x.health == Health::Success).count();
            match m.finished() {
                Some(Step::Done { .. }) => prop_assert_eq!(wins, 1, "served once: {:?}", a),
                _ => prop_assert_eq!(wins, 0),
            }
            // Every lease freed: the hedges' under their own names too.
            for v in &store.views { prop_assert!(v.in_flight.leases.is_empty()); }
        }
    }

    fn status_outcome(s: u16) -> Outcome {
        status(s)
    }
}
