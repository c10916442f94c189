//! Limits in tokens and money through the item machine, as the entry points meet them: an item
//! reserves its estimate of a provider's tokens per minute before its call and settles at the
//! usage its answer reports; with no room, Call Chain's item waits in line for the window and
//! the chat model's call goes to the next model; a spend cap reached skips the provider for every
//! worker until its period ends, and with nowhere else to go the item is deferred to then. The
//! store is the in-memory stand-in; every item is a real `ItemMachine`.
mod common;

use common::{answer, chain, status, Store};
use resilient_engine::config::{Chain, TokenLimitConfig};
use resilient_engine::item::record::record;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{ItemMachine, Poll, Step, WaitCause};
use resilient_engine::limits::token_budget;
use resilient_engine::limits::token_limit::{TokenFacts, Usage, DAY_MS};
use resilient_engine::report::inspect::inspect_with;
use resilient_engine::rng::Rng;
use resilient_engine::verdict::reason::Reason;
use std::sync::Arc;

/// A chain whose first provider has `limit`; `wait_in_line` as Call Chain 2.1 (true) or the
/// chat model (false).
fn limited(names: &[&str], limit: TokenLimitConfig, wait_in_line: bool) -> Arc<Chain> {
    chain(names, |c| {
        c.providers[0].token_limit = Some(limit);
        c.wait_in_line = Some(wait_in_line);
    })
}

/// An item whose request is `chars` Latin characters asking for at most `max_output` tokens.
fn item(chain: &Arc<Chain>, n: u64, chars: u64, max_output: u64) -> ItemMachine {
    let mut m = ItemMachine::new(chain.clone(), 0, format!("item-{n}"), Vec::new(), Rng::seeded(n));
    m.tokens(TokenFacts { chars, max_output: Some(max_output), ..Default::default() });
    m
}

fn poll(m: &mut ItemMachine, store: &mut Store, now: u64) -> Poll {
    let p = m.poll(now, &store.views).expect("views match the chain");
    if let Some(w) = &p.writes {
        store.apply(w);
    }
    p
}

/// The call out answers 200 with `usage` at `now`; its effect recorded.
fn served(c: &Chain, m: &mut ItemMachine, store: &mut Store, now: u64, usage: Usage) {
    let e = m.on_outcome(now, &status(200), &store.views, None, CallEnd::used(Some(usage))).unwrap();
    if let Some(w) = record(c, &store.views[e.provider], &e, now).writes {
        store.apply(&w);
    }
}

const TPM: TokenLimitConfig = TokenLimitConfig {
    tokens_per_minute: 10_000,
    input_tokens_per_minute: 0,
    output_tokens_per_minute: 0,
    output_reserve: 0,
    spend_cap: 0.0,
    spend_period: resilient_engine::limits::token_limit::Period::Day,
    price_input: 0.0,
    price_output: 0.0,
    price_cached_input: 0.0,
    price_reasoning: 0.0,
    price_cache_write: 0.0,
};

#[test]
fn an_item_reserves_its_estimate_and_its_answer_settles_the_minute_at_the_reported_usage() {
    let c = limited(&["a"], TPM, true);
    let mut store = Store::new(1);
    // 16000 characters: 4000 tokens and a quarter; at most 1000 out: 6000 reserved.
    let mut m = item(&c, 1, 16_000, 1_000);
    assert!(matches!(poll(&mut m, &mut store, 1_000).step, Step::Call { provider: 0, .. }));
    assert_eq!(token_budget::used(&store.views[0].tokens.buckets, 1_000), 6_000);
    served(&c, &mut m, &mut store, 2_000, Usage { input: 3_900, output: 350, ..Default::default() });
    assert_eq!(token_budget::used(&store.views[0].tokens.buckets, 2_000), 4_250, "the usage, not the estimate");
    let tokens = m.report().attempts[0].tokens.expect("the attempt says what it used");
    assert_eq!((tokens.input, tokens.output, tokens.estimated), (3_900, 350, false));
    let counters = &m.counters()[0];
    assert_eq!((counters.tokens_input, counters.tokens_output), (3_900, 350));
}

#[test]
fn input_and_output_limited_apart_as_anthropic_does_the_output_minute_full_sends_the_call_on() {
    // Anthropic's limits: 8000 input and 2000 output tokens a minute, no total.
    let apart = TokenLimitConfig {
        tokens_per_minute: 0,
        input_tokens_per_minute: 8_000,
        output_tokens_per_minute: 2_000,
        ..TPM
    };
    let c = limited(&["claude", "gpt"], apart, false);
    let mut store = Store::new(2);
    // 2000 characters: 500 tokens and a quarter in; at most 1500 out.
    let mut first = item(&c, 1, 2_000, 1_500);
    assert!(matches!(poll(&mut first, &mut store, 1_000).step, Step::Call { provider: 0, .. }));
    let v = &store.views[0].tokens;
    assert_eq!(
        (token_budget::used(&v.input_buckets, 1_000), token_budget::used(&v.output_buckets, 1_000)),
        (625, 1_500)
    );
    // 625 of 8000 input tokens, but 1500 of 2000 output tokens held: the next call's 1500 do not fit.
    let mut second = item(&c, 2, 2_000, 1_500);
    assert!(matches!(poll(&mut second, &mut store, 1_100).step, Step::Call { provider: 1, .. }), "the next model");
    // The answer settles each direction at its usage; Anthropic's own counts correct each one.
    let headers = [
        ("anthropic-ratelimit-input-tokens-remaining", "7000"),
        ("anthropic-ratelimit-output-tokens-remaining", "1900"),
    ];
    let ok = answer(200, &headers, None);
    let e = first.on_outcome(
        2_000,
        &ok,
        &store.views,
        None,
        CallEnd::used(Some(Usage { input: 600, output: 200, ..Default::default() })),
    );
    store.apply(&record(&c, &store.views[0], &e.unwrap(), 2_000).writes.unwrap());
    let v = &store.views[0].tokens;
    assert_eq!(
        token_budget::used(&v.input_buckets, 2_000),
        1_000,
        "the vendor holds 1000 input tokens: more than ours"
    );
    assert_eq!(token_budget::used(&v.output_buckets, 2_000), 200, "its 100 output tokens are fewer: ours stand");
    // Get Provider State, which sets no limits of its own, reads them from the row the calls wrote.
    let s = inspect_with(&store.views[0], 2_000, None);
    assert_eq!(
        (s.tokens_left_minute, s.input_tokens_left_minute, s.output_tokens_left_minute),
        (None, Some(7_000), Some(1_800))
    );
    let mut third = item(&c, 3, 2_000, 1_500);
    assert!(matches!(poll(&mut third, &mut store, 2_100).step, Step::Call { provider: 0, .. }), "room again");
}

#[test]
fn with_no_room_the_call_goes_to_the_next_provider_on_both_entry_points() {
    for (wait_in_line, names) in [(true, &["a", "b"][..]), (false, &["first", "second"][..])] {
        let c = limited(names, TPM, wait_in_line);
        let mut store = Store::new(2);
        let mut first = item(&c, 1, 16_000, 1_000);
        assert!(matches!(poll(&mut first, &mut store, 1_000).step, Step::Call { provider: 0, .. }));
        let mut second = item(&c, 2, 16_000, 1_000);
        let p = poll(&mut second, &mut store, 1_100);
        assert!(matches!(p.step, Step::Call { provider: 1, .. }), "{:?}", p.step);
        let skip = second.report().skipped.iter().find(|s| s.provider == 0).unwrap();
        assert_eq!(skip.reason, Reason::TokenLimited);
    }
}

#[test]
fn alone_a_call_chain_item_waits_in_line_for_the_window_within_its_budget() {
    let c = limited(&["a"], TPM, true);
    let mut store = Store::new(1);
    let mut first = item(&c, 1, 16_000, 1_000);
    poll(&mut first, &mut store, 1_000);
    // The first bucket leaves the minute at 65 s: 5 s from 60 s, within the second item's budget.
    let mut second = ItemMachine::new(c.clone(), 60_000, "item-2".into(), Vec::new(), Rng::seeded(2));
    second.tokens(TokenFacts { chars: 16_000, max_output: Some(1_000), ..Default::default() });
    match poll(&mut second, &mut store, 60_000).step {
        Step::Sleep { ms, cause: WaitCause::InLine } => assert!((5_000..=6_000).contains(&ms), "{ms}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(poll(&mut second, &mut store, 66_000).step, Step::Call { provider: 0, .. }));
    // The wait is counted where an operator sees it (resilient_provider_token_waits_total), and
    // it turned no call away.
    let counters = &second.counters()[0];
    assert_eq!((counters.token_waits, counters.token_limited), (1, 0));
}

#[test]
fn with_no_room_before_the_items_budget_ends_the_item_is_deferred_to_when_the_window_frees() {
    let c = limited(&["a"], TPM, true);
    let mut store = Store::new(1);
    let mut first = item(&c, 1, 16_000, 1_000);
    poll(&mut first, &mut store, 1_000);
    let mut second = item(&c, 2, 16_000, 1_000);
    // The window frees at 65 s; the item's budget (60 s) ends before: deferred, retry_at after it.
    match poll(&mut second, &mut store, 1_100).step {
        Step::Defer { retry_at_ms, reason: Reason::TokenLimited } => assert!(retry_at_ms >= 65_000, "{retry_at_ms}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(second.counters()[0].token_limited, 1);
}

#[test]
fn a_spend_cap_reached_sends_the_next_item_to_the_next_provider_and_alone_defers_it_to_the_next_day() {
    let priced = TokenLimitConfig { tokens_per_minute: 0, spend_cap: 0.01, price_input: 2.0, price_output: 8.0, ..TPM };
    let c = limited(&["a", "b"], priced.clone(), true);
    let mut store = Store::new(2);
    let mut m = item(&c, 1, 400, 100);
    assert!(matches!(poll(&mut m, &mut store, 1_000).step, Step::Call { provider: 0, .. }));
    // 3000 in at 2 and 1000 out at 8 per million: 0.006 + 0.008 = 0.014, over the cap of 0.01.
    served(&c, &mut m, &mut store, 2_000, Usage { input: 3_000, output: 1_000, ..Default::default() });
    assert_eq!(m.report().attempts[0].tokens.unwrap().cost_micros, 14_000);
    assert_eq!(m.counters()[0].spend_micros, 14_000);
    let mut next = item(&c, 2, 400, 100);
    assert!(matches!(poll(&mut next, &mut store, 3_000).step, Step::Call { provider: 1, .. }));
    let skip = next.report().skipped.iter().find(|s| s.provider == 0).unwrap();
    assert_eq!((skip.reason, skip.until_ms), (Reason::SpendCap, DAY_MS));

    let alone = limited(&["a"], priced, true);
    let mut store = Store::new(1);
    let mut m = item(&alone, 3, 400, 100);
    poll(&mut m, &mut store, 1_000);
    served(&c, &mut m, &mut store, 2_000, Usage { input: 3_000, output: 1_000, ..Default::default() });
    let mut next = item(&alone, 4, 400, 100);
    match poll(&mut next, &mut store, 3_000).step {
        Step::Defer { retry_at_ms, reason: Reason::SpendCap } => assert!(retry_at_ms >= DAY_MS, "{retry_at_ms}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_call_that_ends_without_usage_settles_at_its_estimate_flagged_and_a_429_at_nothing() {
    let c = limited(&["a"], TPM, true);
    let mut store = Store::new(1);
    let mut m = item(&c, 1, 16_000, 1_000);
    poll(&mut m, &mut store, 1_000);
    // The vendor refused it (429, its remaining tokens 0): nothing used, the window raised to its count.
    let limited = answer(429, &[("retry-after", "1"), ("x-ratelimit-remaining-tokens", "0")], None);
    let e = m.on_outcome(1_500, &limited, &store.views, None, CallEnd::default()).unwrap();
    store.apply(&record(&c, &store.views[0], &e, 1_500).writes.unwrap());
    let t = m.report().attempts[0].tokens.unwrap();
    assert_eq!((t.input, t.output, t.estimated), (0, 0, false));
    assert_eq!(token_budget::used(&store.views[0].tokens.buckets, 1_500), 10_000, "the vendor says its minute is full");

    let mut store = Store::new(1);
    let mut m = item(&c, 2, 16_000, 1_000);
    poll(&mut m, &mut store, 1_000);
    let e = m.on_outcome(
        1_500,
        &resilient_engine::verdict::outcome::Outcome::Error { code: "ECONNRESET".into() },
        &store.views,
        None,
        CallEnd::default(),
    );
    let e = e.unwrap();
    let writes = record(&c, &store.views[0], &e, 1_500).writes;
    assert!(writes.is_none_or(|w| w.tokens.is_none()), "the estimate stands: no tokens row to write");
    let t = m.report().attempts[0].tokens.unwrap();
    assert_eq!((t.input, t.output, t.estimated), (5_000, 1_000, true));
    assert_eq!(m.counters()[0].tokens_estimated, 6_000);
}

#[test]
fn a_provider_without_token_limits_reserves_nothing_and_writes_no_tokens_row_but_counts_its_usage() {
    let c = chain(&["a"], |_| {});
    let mut store = Store::new(1);
    let mut m = item(&c, 1, 16_000, 1_000);
    let p = poll(&mut m, &mut store, 1_000);
    assert!(p.writes.as_ref().is_none_or(|w| w.tokens.is_none()));
    served(&c, &mut m, &mut store, 2_000, Usage { input: 3_900, output: 350, ..Default::default() });
    assert_eq!(store.views[0].tokens.version, 0);
    // The usage its answer reported is still counted (`resilient_provider_tokens_total`).
    let t = m.report().attempts[0].tokens.unwrap();
    assert_eq!((t.input, t.output, t.estimated, t.cost_micros), (3_900, 350, false, 0));
    assert_eq!((m.counters()[0].tokens_input, m.counters()[0].tokens_output), (3_900, 350));
}

#[test]
fn the_write_that_reaches_the_spend_cap_carries_the_triggers_event_once() {
    let priced = TokenLimitConfig { tokens_per_minute: 0, spend_cap: 0.01, price_input: 2.0, price_output: 8.0, ..TPM };
    let c = limited(&["a"], priced, true);
    let mut store = Store::new(1);
    let mut events = Vec::new();
    for n in 0..4 {
        let mut m = item(&c, n, 400, 100);
        let now = 1_000 + n * 1_000;
        if !matches!(poll(&mut m, &mut store, now).step, Step::Call { .. }) {
            continue; // the cap reached: no call
        }
        // 0.004 a call: the third reaches the cap of 0.01.
        let usage = Some(Usage { input: 1_000, output: 250, ..Default::default() });
        let e = m.on_outcome(now + 10, &status(200), &store.views, None, CallEnd::used(usage)).unwrap();
        let rec = record(&c, &store.views[0], &e, now + 10);
        let w = rec.writes.clone().unwrap();
        let text = resilient_engine::report::event::writes(&c, &w, rec.transition.as_ref(), rec.spend_cap.as_ref());
        events.extend(text.event);
        store.apply(&w);
    }
    assert_eq!(events.len(), 1, "{events:?}");
    let e: serde_json::Value = serde_json::from_str(&events[0]).unwrap();
    assert_eq!(e["provider"], "a");
    assert_eq!((e["spend_cap"]["spent"].as_str(), e["spend_cap"]["cap"].as_str()), (Some("0.012"), Some("0.01")));
    assert_eq!(e["spend_cap"]["until"], "1970-01-02T00:00:00.000Z");
}

/// Item Concurrency at any width: ten items polled at once against a spend cap for four calls at
/// their estimate. Each call holds its estimated cost while it is out, so four go, the rest wait
/// in line; once the four answer (at their estimate) the cap is reached and the rest are deferred
/// to the next day. Spent: the cap, never more (without the holds all ten went: 2.5x the cap).
#[test]
fn calls_out_at_once_hold_their_estimated_cost_so_the_spend_cap_holds_at_any_concurrency() {
    // 400 characters: 125 input tokens as estimated, 75 output at most: 200 tokens at 5 per
    // million, 1000 micros a call; the cap 0.004 is four calls.
    let priced =
        TokenLimitConfig { tokens_per_minute: 0, spend_cap: 0.004, price_input: 5.0, price_output: 5.0, ..TPM };
    let c = limited(&["a"], priced, true);
    let mut store = Store::new(1);
    let mut items: Vec<ItemMachine> = (0..10).map(|n| item(&c, n, 400, 75)).collect();
    let (mut out, mut waiting) = (Vec::new(), Vec::new());
    for (k, m) in items.iter_mut().enumerate() {
        match poll(m, &mut store, 1_000).step {
            Step::Call { .. } => out.push(k),
            Step::Sleep { cause: WaitCause::InLine, ms } => {
                assert!(ms <= 2_000, "{ms}");
                waiting.push(k)
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((out.len(), waiting.len()), (4, 6), "four calls hold the whole cap");
    for &k in &out {
        served(&c, &mut items[k], &mut store, 1_300, Usage { input: 125, output: 75, ..Default::default() });
    }
    assert!(store.views[0].spend.held.is_empty(), "every hold released at its call's end");
    let spent: u64 = out.iter().map(|&k| items[k].counters()[0].spend_micros).sum();
    assert_eq!(spent, 4_000, "the cap, not more");
    for &k in &waiting {
        match poll(&mut items[k], &mut store, 1_500).step {
            Step::Defer { retry_at_ms, reason: Reason::SpendCap } => assert!(retry_at_ms >= DAY_MS),
            other => panic!("{other:?}"),
        }
    }
}

/// A hold whose call never reports back (its worker was killed mid-call) lapses at its lease's
/// end: the cap is not held forever.
#[test]
fn a_hold_its_worker_never_released_lapses_at_its_lease_end() {
    let priced =
        TokenLimitConfig { tokens_per_minute: 0, spend_cap: 0.001, price_input: 5.0, price_output: 5.0, ..TPM };
    let c = limited(&["a"], priced, false);
    let mut store = Store::new(1);
    let mut gone = item(&c, 1, 400, 75);
    assert!(matches!(poll(&mut gone, &mut store, 0).step, Step::Call { .. }));
    let lease = c.providers[0].breaker.probe_lease_ms;
    let mut next = item(&c, 2, 400, 75);
    assert!(!matches!(poll(&mut next, &mut store, lease - 1).step, Step::Call { .. }), "still held");
    let mut later = item(&c, 3, 400, 75);
    assert!(matches!(poll(&mut later, &mut store, lease).step, Step::Call { .. }), "lapsed");
}

#[test]
fn a_chain_of_a_small_and_a_large_model_reserves_each_ones_own_estimate() {
    // Both limited; the small model asks for at most 200 tokens out, the large one for 4000.
    let c = chain(&["small", "large"], |c| {
        for p in &mut c.providers {
            p.token_limit = Some(TPM);
        }
    });
    let mut store = Store::new(2);
    let mut m = ItemMachine::new(c.clone(), 0, "item-1".into(), Vec::new(), Rng::seeded(1));
    m.provider_tokens(0, TokenFacts { chars: 4_000, max_output: Some(200), ..Default::default() });
    m.provider_tokens(1, TokenFacts { chars: 4_100, max_output: Some(4_000), ..Default::default() });
    assert!(matches!(poll(&mut m, &mut store, 1_000).step, Step::Call { provider: 0, .. }));
    // 4000 characters: 1000 tokens and a quarter in, 200 out.
    assert_eq!(token_budget::used(&store.views[0].tokens.buckets, 1_000), 1_450);
    // The small model fails for good (a 400): the large one reserves its own body and maximum.
    let e = m.on_outcome(1_500, &status(400), &store.views, None, CallEnd::default()).unwrap();
    if let Some(w) = record(&c, &store.views[0], &e, 1_500).writes {
        store.apply(&w);
    }
    let mut at = 1_500;
    let provider = loop {
        match poll(&mut m, &mut store, at).step {
            Step::Call { provider, .. } => break provider,
            Step::Sleep { ms, .. } => at += ms,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(provider, 1);
    // 4100 characters: 1025 tokens and a quarter (1282, rounded up), 4000 out.
    assert_eq!(token_budget::used(&store.views[1].tokens.buckets, at), 5_282);
}
