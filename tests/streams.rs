//! Streamed calls (the chat model under a root node that streams): until the first committing
//! chunk an attempt like any other; after it the item's answer, never continued by another model.
mod common;
use common::{chain, status, Store};
use resilient_engine::config::ChainConfig;
use resilient_engine::facts::stream::{Pace, StreamStep};
use resilient_engine::item::record::record;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{ItemMachine, Step};
use resilient_engine::rng::Rng;
use resilient_engine::verdict::outcome::Outcome;
use resilient_engine::verdict::reason::Reason;

fn streaming(names: &[&str]) -> std::sync::Arc<resilient_engine::config::Chain> {
    chain(names, |c| c.streams = true)
}

#[test]
fn a_first_chunk_deadline_not_below_the_attempt_deadline_is_refused_by_name() {
    for (first, deadline) in [(10_000, 10_000), (12_000, 10_000)] {
        let cfg = ChainConfig {
            providers: vec![resilient_engine::config::ProviderConfig { name: "a".into(), ..Default::default() }],
            streams: true,
            first_chunk_deadline_ms: first,
            deadline_ms: deadline,
            ..Default::default()
        };
        let e = cfg.validate().unwrap_err();
        assert_eq!(e.field(), Some("first_chunk_deadline_ms"), "{e}");
    }
    let calls_only = ChainConfig {
        providers: vec![resilient_engine::config::ProviderConfig { name: "a".into(), ..Default::default() }],
        first_chunk_deadline_ms: 60_000,
        ..Default::default()
    };
    assert!(calls_only.validate().unwrap().stream.is_none(), "a chain that never streams ignores the stream limits");
}

#[test]
fn a_streamed_attempt_carries_its_limits_and_a_plain_one_none() {
    let c = streaming(&["openai", "anthropic"]);
    let store = Store::new(2);
    let mut m = ItemMachine::new(c.clone(), 0, "chat".into(), vec![], Rng::seeded(1));
    m.stream().unwrap();
    let Step::Call { stream, deadline_ms, .. } = m.poll(0, &store.views).unwrap().step else { panic!("a call") };
    assert_eq!(deadline_ms, 10_000);
    assert_eq!(
        stream,
        Some(StreamStep {
            first_chunk_ms: 8_000,
            idle_ms: 30_000,
            total_ms: 60_000,
            learn_pace: false,
            paced_idle_ms: 0
        })
    );

    let mut plain = ItemMachine::new(c, 0, "chat".into(), vec![], Rng::seeded(1));
    let Step::Call { stream, .. } = plain.poll(0, &store.views).unwrap().step else { panic!("a call") };
    assert_eq!(stream, None);
    let no_limits = chain(&["a"], |_| {});
    assert!(ItemMachine::new(no_limits, 0, "x".into(), vec![], Rng::seeded(1)).stream().is_err());
}

#[test]
fn model_1_drops_its_stream_after_two_chunks_the_call_fails_and_model_2_is_never_asked() {
    let c = streaming(&["openai", "anthropic"]);
    let mut store = Store::new(2);
    let mut m = ItemMachine::new(c.clone(), 0, "chat".into(), vec![], Rng::seeded(7));
    m.stream().unwrap();
    let mut calls = vec![];
    let mut now = 0;
    let end = loop {
        let poll = m.poll(now, &store.views).unwrap();
        if let Some(w) = &poll.writes {
            store.apply(w);
        }
        match poll.step {
            Step::Call { provider, .. } => {
                calls.push(provider);
                now += 2_000;
                let effect = m
                    .on_outcome(
                        now,
                        &Outcome::Broken { code: "ECONNRESET".into() },
                        &store.views,
                        None,
                        CallEnd::default(),
                    )
                    .unwrap();
                if let Some(w) = &record(&c, &store.views[provider], &effect, now).writes {
                    store.apply(w);
                }
            }
            Step::Sleep { ms, .. } => now += ms,
            end => break end,
        }
    };
    assert_eq!(end, Step::Fail { reason: Reason::StreamBroken });
    assert_eq!(calls, vec![0], "no other model continues a partial answer");
    let counters = m.counters();
    assert_eq!((counters[0].calls, counters[0].failures), (1, 1), "model 1 counted once");
    assert_eq!(counters[1].calls, 0);
    assert_eq!(store.views[0].breaker.failures.len(), 1, "the breaker saw one failure");
    assert_eq!(m.report().attempts[0].outcome, "stream_broken:ECONNRESET");
}

#[test]
fn a_stream_that_completes_is_one_success() {
    let c = streaming(&["openai", "anthropic"]);
    let mut store = Store::new(2);
    let (end, calls, m) =
        common::run_item(&c, &mut store, &mut 0, common::Job::new(3, "chat"), |_, _| status(200), 25_000);
    assert_eq!(end, Step::Done { provider: 0, name: "openai".into(), fallback: false, checks: vec![] });
    assert_eq!(calls.len(), 1);
    assert_eq!(m.counters()[0].failures, 0);
}

/// The chat model 1.2's chain: the first-chunk deadline follows each provider's pace.
/// The chat model 1.2 at its defaults: a 10 s per-attempt deadline, a 60 s budget.
fn paced(names: &[&str]) -> std::sync::Arc<resilient_engine::config::Chain> {
    chain(names, |c| {
        c.streams = true;
        c.learn_stream_pace = Some(true);
    })
}

/// One message to the chain: its first call's first-chunk deadline, then `first_chunk` (the time
/// its first chunk came, answered) or a timeout with nothing; the rows written back.
fn message(
    c: &std::sync::Arc<resilient_engine::config::Chain>,
    store: &mut Store,
    now: u64,
    first_chunk: Option<u64>,
) -> u64 {
    let mut m = ItemMachine::new(c.clone(), now, format!("msg{now}"), vec![], Rng::seeded(now));
    m.stream().unwrap();
    let poll = m.poll(now, &store.views).unwrap();
    if let Some(w) = &poll.writes {
        store.apply(w);
    }
    let Step::Call { provider, stream: Some(stream), .. } = poll.step else { panic!("a streamed call") };
    let (end_at, outcome) = match first_chunk {
        Some(ms) => {
            m.commit(None, ms);
            (now + ms + 500, status(200))
        }
        None => (now + stream.first_chunk_ms, Outcome::Error { code: "TIMEOUT".into() }),
    };
    let effect = m.on_outcome(end_at, &outcome, &store.views, None, CallEnd::default()).unwrap();
    if let Some(w) = &record(c, &store.views[provider], &effect, end_at).writes {
        store.apply(w);
    }
    stream.first_chunk_ms
}

#[test]
fn a_usually_quick_model_gets_two_seconds_for_its_first_chunk_once_it_has_answered_three_times() {
    let c = paced(&["openai", "anthropic"]);
    let mut store = Store::new(2);
    let deadlines: Vec<u64> = [Some(300), Some(450), Some(350), None]
        .iter()
        .enumerate()
        .map(|(k, &first)| message(&c, &mut store, 10_000 * k as u64, first))
        .collect();
    assert_eq!(deadlines, vec![8_000, 8_000, 8_000, 2_000], "no history: the fixed 8 s; then its pace");
    assert_eq!(store.views[0].breaker.failures.len(), 1, "a model slower than its own pace: counted");
}

#[test]
fn a_reasoning_model_is_cut_twice_then_given_its_time_and_its_breaker_never_opens() {
    let c = paced(&["o3", "gpt-4o"]);
    let mut store = Store::new(2);
    let answers = [None, None, Some(21_000), Some(17_000), Some(24_000), Some(19_000)];
    let deadlines: Vec<u64> =
        answers.iter().enumerate().map(|(k, &first)| message(&c, &mut store, 100_000 * k as u64, first)).collect();
    // Past the 10 s per-attempt deadline: a first token's wait is the model's pace, and the
    // item's budget (60 s) bounds it.
    assert_eq!(deadlines, vec![8_000, 16_000, 32_000, 60_000, 60_000, 60_000], "the item's budget bounds it");
    assert_eq!(store.views[0].breaker.trips, 0);
    assert_eq!(store.views[0].pace.ms, vec![21_000, 17_000, 24_000, 19_000]);
}

#[test]
fn a_first_chunk_deadline_the_items_budget_cut_short_says_nothing_of_the_provider() {
    let c = chain(&["o3", "gpt-4o"], |c| {
        c.streams = true;
        c.learn_stream_pace = Some(true);
        c.deadline_ms = 60_000;
        c.budget_ms = 5_000;
    });
    let mut store = Store::new(2);
    store.views[0].pace = resilient_engine::facts::pace_row::PaceRow {
        ms: vec![15_000, 20_000, 18_000],
        at_ms: vec![0, 0, 0],
        ..Default::default()
    };
    assert_eq!(message(&c, &mut store, 1_000, None), 5_000, "its pace says 60 s; the budget leaves 5 s");
    assert!(store.views[0].breaker.failures.is_empty(), "not counted against it");
    assert_eq!(store.views[0].pace.cut_ms, 0, "nor learned");
}

/// One streamed answer that showed its pace: chunks `gap_ms` apart, its `StreamPace` run as the
/// node runs it; its outcome carries what the pace learned. Returns the step's starting idle limit.
fn paced_answer(c: &std::sync::Arc<resilient_engine::config::Chain>, store: &mut Store, now: u64, gap_ms: u64) -> u64 {
    let mut m = ItemMachine::new(c.clone(), now, format!("answer{now}"), vec![], Rng::seeded(now));
    m.stream().unwrap();
    let poll = m.poll(now, &store.views).unwrap();
    let Step::Call { provider, stream: Some(stream), .. } = poll.step else { panic!("a streamed call") };
    m.commit(None, 300);
    let mut pace = Pace::new(stream.idle_ms, stream.learn_pace, stream.paced_idle_ms);
    let end_at = (0..20).map(|k| now + 300 + k * gap_ms).inspect(|&at| _ = pace.chunk(at)).last().unwrap();
    let end = CallEnd { longest_gap_ms: pace.learned_gap(), ..CallEnd::default() };
    let effect = m.on_outcome(end_at, &status(200), &store.views, None, end).unwrap();
    if let Some(w) = &record(c, &store.views[provider], &effect, end_at).writes {
        store.apply(w);
    }
    stream.paced_idle_ms
}

#[test]
fn a_models_last_answers_set_the_next_streams_idle_limit_before_its_own_chunks_do() {
    let c = paced(&["openai", "anthropic"]);
    let mut store = Store::new(2);
    let starts: Vec<u64> = (0..4).map(|k| paced_answer(&c, &mut store, 10_000 * k, 50 + 10 * k)).collect();
    assert_eq!(starts, vec![0, 0, 0, 2_000], "three answers every 50-70 ms: 2 s from the fourth on");
    assert_eq!(store.views[0].pace.gap_ms, vec![50, 60, 70, 80]);
    // The fourth's stream goes silent after its third chunk: cut 2 s later, not at 30 s.
    let mut pace = Pace::new(30_000, true, 2_000);
    let limits: Vec<u64> = (0..3).map(|k| pace.chunk(k * 50)).collect();
    assert_eq!(limits, vec![2_000; 3]);
    let fixed = chain(&["openai"], |c| c.streams = true);
    assert_eq!(paced_answer(&fixed, &mut Store::new(1), 0, 50), 0, "before the chat model 1.2: none");
}
