//! The four field reports' rules, as scenarios through the engine (see shared notes).
mod common;
use common::*;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{Step, WaitCause};
use resilient_engine::limits::breaker::{admit, record, Admission, BreakerPolicy, BreakerRow, Phase};
use resilient_engine::verdict::outcome::{Health, Outcome};
use resilient_engine::verdict::reason::Reason;

fn policy(k: u32) -> BreakerPolicy {
    BreakerPolicy { half_open_probes: k, ..Default::default() }
}

fn fail(row: &BreakerRow, p: &BreakerPolicy, now: u64) -> BreakerRow {
    record(row, p, now, Health::Failure, "w", "504").row.unwrap_or_else(|| row.clone())
}

#[test]
fn seed002_five_504s_within_60s_open_the_breaker_and_the_next_call_is_skipped() {
    let p = policy(1);
    let mut row = BreakerRow::default();
    for t in 0..4 {
        row = fail(&row, &p, t * 1000);
        assert_eq!(row.phase, Phase::Closed);
    }
    let r = record(&row, &p, 4000, Health::Failure, "w", "504");
    let t = r.transition.expect("exactly one transition on the trip");
    assert_eq!((t.from, t.to), (Phase::Closed, Phase::Open));
    row = r.row.unwrap();
    assert_eq!(row.open_until_ms, 34_000, "open 30 s (seed 000)");
    assert_eq!(admit(&row, &p, 5000, "x").decision, Admission::Skip { until_ms: 34_000, reason: Reason::CircuitOpen });
    assert_eq!(admit(&row, &p, 5000, "x").row, None, "a skip writes nothing");
}

#[test]
fn failures_older_than_the_window_do_not_count() {
    let p = policy(1);
    let mut row = BreakerRow::default();
    for t in [0, 20_000, 40_000, 61_000, 62_000] {
        row = fail(&row, &p, t);
    }
    assert_eq!(row.phase, Phase::Closed, "the failure at t=0 expired before the fifth");
    row = fail(&row, &p, 63_000);
    assert_eq!(row.phase, Phase::Open);
}

#[test]
fn four_xx_never_counts_against_a_provider() {
    let p = policy(1);
    let row = BreakerRow::default();
    for _ in 0..100 {
        assert_eq!(record(&row, &p, 0, Health::Neutral, "w", "422").row, None);
    }
}

#[test]
fn after_the_window_exactly_k_probes_are_admitted_until_their_leases_end() {
    for k in [1u32, 3] {
        let p = policy(k);
        let mut row = BreakerRow::default();
        for t in 0..5 {
            row = fail(&row, &p, t);
        }
        let now = row.open_until_ms;
        let mut probes = 0;
        for w in 0..40 {
            let d = admit(&row, &p, now, &format!("worker{w}"));
            if let Admission::Probe { .. } = d.decision {
                probes += 1;
                row = d.row.unwrap();
            } else {
                assert!(matches!(d.decision, Admission::Skip { reason: Reason::HalfOpenBusy, .. }));
            }
        }
        assert_eq!(probes, k, "K probes fleet-wide, not per worker");
        // The holders die: their leases end and new probes go through.
        let later = now + p.probe_lease_ms;
        assert!(matches!(admit(&row, &p, later, "survivor").decision, Admission::Probe { .. }));
    }
}

#[test]
fn items_that_find_the_probe_taken_come_back_when_it_has_its_answer_not_at_its_lease_end() {
    // Deadline 10 s, lease 20 s (the node's defaults): a live probe answers within 10 s.
    let p = BreakerPolicy { probe_lease_ms: 20_000, probe_answer_ms: 10_000, ..policy(1) };
    let mut row = BreakerRow::default();
    for t in 0..5 {
        row = fail(&row, &p, t);
    }
    let start = row.open_until_ms;
    row = admit(&row, &p, start, "prober").row.unwrap();
    let busy_until = |now: u64| match admit(&row, &p, now, "other").decision {
        Admission::Skip { until_ms, reason: Reason::HalfOpenBusy } => until_ms,
        d => panic!("{d:?}"),
    };
    assert_eq!(busy_until(start + 1_000), start + 10_000, "back when the probe's call must have ended");
    // Past that the holder is dead or hung: wait for its lease, which frees the slot.
    assert_eq!(busy_until(start + 12_000), start + 20_000);
}

#[test]
fn a_probe_success_closes_and_a_probe_failure_reopens_with_a_grown_window() {
    let p = policy(1);
    let mut row = BreakerRow::default();
    for t in 0..5 {
        row = fail(&row, &p, t);
    }
    let mut now = row.open_until_ms;
    for expected_window in [60_000, 120_000, 240_000, 480_000, 600_000, 600_000] {
        row = admit(&row, &p, now, "probe").row.unwrap();
        assert_eq!(row.phase, Phase::HalfOpen);
        let r = record(&row, &p, now, Health::Failure, "probe", "503");
        row = r.row.unwrap();
        assert_eq!(row.open_until_ms - now, expected_window, "x2 growth capped at 10 min");
        now = row.open_until_ms;
    }
    row = admit(&row, &p, now, "probe").row.unwrap();
    let r = record(&row, &p, now, Health::Success, "probe", "200");
    let closed = r.row.unwrap();
    assert_eq!((closed.phase, closed.streak), (Phase::Closed, 0), "a clean close resets the growth");
    assert_eq!(r.transition.unwrap().to, Phase::Closed);
}

#[test]
fn seed001_no_probe_mode_calls_pass_after_the_window_and_one_failure_rearms() {
    let p = BreakerPolicy { half_open_probes: 0, threshold: 3, open_ms: 600_000, ..Default::default() };
    let mut row = BreakerRow::default();
    for t in 0..3 {
        row = fail(&row, &p, t);
    }
    assert_eq!(admit(&row, &p, 1000, "x").decision, Admission::Skip { until_ms: 600_002, reason: Reason::Cooldown });
    let d = admit(&row, &p, 600_002, "x");
    assert_eq!(d.decision, Admission::Call, "no probe request 'just to check': a real call");
    row = d.row.unwrap();
    assert_eq!(admit(&row, &p, 600_002, "y").decision, Admission::Call, "everyone passes");
    row = fail(&row, &p, 600_003);
    assert_eq!(row.phase, Phase::Open, "one failure re-arms at once");
}

#[test]
fn version_rises_by_one_only_when_the_row_changed() {
    let p = policy(1);
    let row = BreakerRow::default();
    assert_eq!(record(&row, &p, 0, Health::Success, "w", "200").row, None, "healthy steady state: no write");
    let r1 = fail(&row, &p, 0);
    assert_eq!(r1.version, 1);
    let r2 = record(&r1, &p, 1, Health::Success, "w", "200").row.unwrap();
    assert_eq!(r2.version, 2);
}

#[test]
fn seed001_always_500_provider_ten_jobs_cost_exactly_the_threshold() {
    let chain = chain(&["primary", "fallback"], |c| {
        c.threshold = 3;
        c.open_ms = 600_000;
        c.half_open_probes = 0;
    });
    let mut store = Store::new(2);
    let mut now = 1_000_000;
    let mut primary_calls = 0;
    for job in 0..10 {
        let (end, calls, m) = run_item(
            &chain,
            &mut store,
            &mut now,
            Job::new(job, "w"),
            |i, _| status(if i == 0 { 500 } else { 200 }),
            50,
        );
        primary_calls += calls.iter().filter(|(i, _)| *i == 0).count();
        assert_eq!(end, Step::Done { provider: 1, name: "fallback".into(), fallback: true, checks: vec![] });
        if job > 0 {
            assert_eq!(m.report().skipped[0].reason, Reason::Cooldown, "job {job} skips the cooled provider");
        }
    }
    assert_eq!(primary_calls, 3, "3 for the first job, then 0 until the window ends");
}

#[test]
fn seed001_without_cooldown_the_same_ten_jobs_cost_fifty() {
    // The baseline this product replaces: 5 tries per job, no memory across jobs.
    let chain = chain(&["primary", "fallback"], |c| {
        c.max_attempts = 5;
        c.threshold = 10_000;
        c.base_ms = 1;
        c.cap_ms = 1;
    });
    let mut store = Store::new(2);
    let mut now = 0;
    let mut primary_calls = 0;
    for job in 0..10 {
        let (_, calls, _) = run_item(
            &chain,
            &mut store,
            &mut now,
            Job::new(job, "w"),
            |i, _| status(if i == 0 { 500 } else { 200 }),
            10,
        );
        primary_calls += calls.iter().filter(|(i, _)| *i == 0).count();
    }
    assert_eq!(primary_calls, 50);
}

#[test]
fn seed003_a_429_with_retry_after_is_honoured_and_a_422_is_never_retried() {
    let chain = chain(&["api"], |_| {});
    let mut store = Store::new(1);
    let mut now = 0;
    let mut answers = vec![retry_after(429, "2"), status(200)].into_iter();
    let (end, calls, m) = run_item(&chain, &mut store, &mut now, Job::new(1, "w"), |_, _| answers.next().unwrap(), 0);
    assert!(matches!(end, Step::Done { .. }));
    assert_eq!(calls[1].1 - calls[0].1, 2000, "the second call waited exactly Retry-After");
    assert_eq!(m.report().attempts[0].wait_cause, Some(WaitCause::RetryAfter));
    assert!(m.report().attempts[0].retry_after);

    let mut store = Store::new(1);
    let (end, calls, _) = run_item(&chain, &mut store, &mut now, Job::new(2, "w"), |_, _| status(422), 0);
    assert_eq!(end, Step::Fail { reason: Reason::NonRetryable });
    assert_eq!(calls.len(), 1);
    assert_eq!(store.views[0].breaker.version, 0, "and it never counted against the provider");
}

#[test]
fn each_vendor_hint_is_waited_exactly() {
    let gemini = r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}"#;
    let cases = [
        (answer(429, &[("retry-after-ms", "1234"), ("retry-after", "2")], None), 1_234, WaitCause::RetryAfter),
        (answer(429, &[], Some(gemini)), 1_500, WaitCause::RetryAfter),
        (answer(503, &[], Some(gemini)), 1_500, WaitCause::RetryAfter),
        (
            answer(429, &[("x-ratelimit-reset-requests", "2.5s"), ("x-ratelimit-remaining-requests", "0")], None),
            2_500,
            WaitCause::RateLimitReset,
        ),
        (
            answer(429, &[("anthropic-ratelimit-tokens-reset", "1970-01-01T00:00:03Z")], None),
            3_000,
            WaitCause::RateLimitReset,
        ),
    ];
    for (first, waited, cause) in cases {
        let chain = chain(&["api"], |_| {});
        let (mut store, mut now) = (Store::new(1), 0);
        let mut answers = vec![first.clone(), status(200)].into_iter();
        let (end, calls, m) =
            run_item(&chain, &mut store, &mut now, Job::new(1, "w"), |_, _| answers.next().unwrap(), 0);
        assert!(matches!(end, Step::Done { .. }), "{first:?}");
        assert_eq!(calls[1].1 - calls[0].1, waited, "{first:?}");
        assert_eq!(m.report().attempts[0].wait_cause, Some(cause), "{first:?}");
        assert_eq!(m.report().attempts[0].retry_after, cause == WaitCause::RetryAfter, "{first:?}");
    }
}

#[test]
fn a_client_error_moves_on_by_default_and_ends_the_item_when_the_chain_says_so() {
    let too_long = || Outcome::Status {
        status: 400,
        headers: Default::default(),
        failed_check: None,
        answer: None,
        body: Some(r#"{"error":{"code":"context_length_exceeded"}}"#.into()),
    };
    let answer = |first: Outcome| move |i: usize, _| if i == 0 { first.clone() } else { status(200) };
    let mut now = 0;
    let call_chain = chain(&["primary", "fallback"], |_| {});
    for s in [400, 404, 409, 422] {
        let mut store = Store::new(2);
        let (end, calls, _) = run_item(&call_chain, &mut store, &mut now, Job::new(1, "w"), answer(status(s)), 5);
        assert!(matches!(end, Step::Done { provider: 1, .. }), "Call Chain's rule: {s} moves on");
        assert_eq!(calls.len(), 2);
    }

    let chat = chain(&["primary", "fallback"], |c| c.next_provider_on_client_error = false);
    for s in [400, 404, 409, 422] {
        let mut store = Store::new(2);
        let (end, calls, _) = run_item(&chat, &mut store, &mut now, Job::new(2, "w"), answer(status(s)), 5);
        assert_eq!(end, Step::Fail { reason: Reason::NonRetryable }, "{s}");
        assert_eq!(calls.iter().map(|c| c.0).collect::<Vec<_>>(), [0], "{s}: the fallback gets no request");
        assert_eq!(store.views[0].breaker.version, 0, "{s}: never counted against the provider");
    }
    for s in [401, 403, 503] {
        let mut store = Store::new(2);
        let (end, _, _) = run_item(&chat, &mut store, &mut now, Job::new(3, "w"), answer(status(s)), 5);
        assert!(matches!(end, Step::Done { provider: 1, .. }), "{s} keeps its rule: the next provider");
    }

    let mut store = Store::new(2);
    let (end, calls, _) = run_item(&chat, &mut store, &mut now, Job::new(4, "w"), answer(too_long()), 5);
    assert_eq!((end, calls.len()), (Step::Fail { reason: Reason::ContextTooLong }, 1), "its own rule, off by default");
    let growing = chain(&["primary", "fallback"], |c| {
        c.next_provider_on_client_error = false;
        c.next_provider_when_input_too_long = Some(true);
    });
    let mut store = Store::new(2);
    let (end, _, _) = run_item(&growing, &mut store, &mut now, Job::new(5, "w"), answer(too_long()), 5);
    assert!(matches!(end, Step::Done { provider: 1, .. }), "the context-too-long option decides a too-long input");
}

#[test]
fn a_3600s_hint_gates_the_provider_for_3600s_without_sleeping() {
    let chain = chain(&["slow", "other"], |_| {});
    let mut store = Store::new(2);
    let mut now = 10_000;
    let (end, calls, m) = run_item(
        &chain,
        &mut store,
        &mut now,
        Job::new(3, "w"),
        |i, _| if i == 0 { retry_after(503, "3600") } else { status(503) },
        0,
    );
    assert_eq!(m.report().slept_ms, m.report().attempts.iter().map(|a| a.wait_ms).sum::<u64>());
    assert!(m.report().attempts.iter().all(|a| a.provider == 1 || a.wait_ms == 0), "never slept on the hint");
    assert_eq!(calls.iter().filter(|(i, _)| *i == 0).count(), 1);
    assert_eq!(store.views[0].gate.closed_until_ms, 10_000 + 3_600_000, "gate closed for every worker");
    match end {
        Step::Defer { retry_at_ms, .. } => assert!(retry_at_ms >= now, "{retry_at_ms}"),
        other => panic!("{other:?}"),
    }
    // A second item (another worker) does not call the gated provider at all.
    let (_, calls2, m2) = run_item(&chain, &mut store, &mut now, Job::new(4, "w2"), |_, _| status(200), 0);
    assert!(calls2.iter().all(|(i, _)| *i == 1));
    assert_eq!(m2.report().skipped[0].reason, Reason::RateLimited);
}

#[test]
fn an_answer_that_spends_the_last_of_the_quota_closes_the_gate_until_its_reset() {
    // OpenAI's and Anthropic's formats: the call served, and its headers say nothing is left.
    let spent = [
        answer(200, &[("x-ratelimit-remaining-requests", "0"), ("x-ratelimit-reset-requests", "20s")], None),
        answer(
            200,
            &[
                ("anthropic-ratelimit-requests-remaining", "0"),
                ("anthropic-ratelimit-requests-reset", "1970-01-01T00:00:30Z"),
            ],
            None,
        ),
    ];
    for (first, until) in spent.into_iter().zip([10_000 + 20_000, 30_000]) {
        let chain = chain(&["api", "other"], |_| {});
        let (mut store, mut now) = (Store::new(2), 10_000);
        let (end, calls, _) = run_item(&chain, &mut store, &mut now, Job::new(1, "w"), |_, _| first.clone(), 0);
        assert!(matches!(end, Step::Done { provider: 0, .. }), "{first:?}: it served");
        assert_eq!(calls.len(), 1);
        assert_eq!(store.views[0].gate.closed_until_ms, until, "{first:?}: gate closed until the reset");
        // The next item, on any worker, goes to the next provider until then.
        let (_, calls2, m2) = run_item(&chain, &mut store, &mut now, Job::new(2, "w2"), |_, _| status(200), 0);
        assert!(calls2.iter().all(|(i, _)| *i == 1), "{first:?}");
        assert_eq!(m2.report().skipped[0].reason, Reason::RateLimited);
    }
    // A Retry-After on the same answer does not hide the spent quota.
    let two = chain(&["api", "other"], |_| {});
    let (mut store, mut now) = (Store::new(2), 10_000);
    let both = answer(
        200,
        &[("retry-after", "1"), ("x-ratelimit-remaining-requests", "0"), ("x-ratelimit-reset-requests", "20s")],
        None,
    );
    run_item(&two, &mut store, &mut now, Job::new(4, "w"), |_, _| both.clone(), 0);
    assert_eq!(store.views[0].gate.closed_until_ms, 30_000);
    // Quota left: nothing closes.
    let chain = chain(&["api"], |_| {});
    let (mut store, mut now) = (Store::new(1), 10_000);
    let left = answer(200, &[("x-ratelimit-remaining-requests", "7"), ("x-ratelimit-reset-requests", "20s")], None);
    run_item(&chain, &mut store, &mut now, Job::new(3, "w"), |_, _| left.clone(), 0);
    assert_eq!(store.views[0].gate.closed_until_ms, 0);
}

#[test]
fn a_single_provider_with_a_long_hint_defers_no_earlier_than_the_hint() {
    let chain = chain(&["only"], |_| {});
    let mut store = Store::new(1);
    let mut now = 0;
    let (end, _, _) = run_item(&chain, &mut store, &mut now, Job::new(5, "w"), |_, _| retry_after(429, "3600"), 0);
    match end {
        Step::Defer { retry_at_ms, reason } => {
            assert!(retry_at_ms >= 3_600_000);
            assert_eq!(reason, Reason::RetryAfterExceedsCap);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn post_is_retried_only_with_an_idempotency_key_and_always_the_same_key() {
    let chain = chain(&["pay"], |c| c.providers[0].method = "POST".into());
    let mut store = Store::new(1);
    let mut now = 0;
    let (end, calls, _) =
        run_item(&chain, &mut store, &mut now, Job::new(6, "w").keys(vec![None]), |_, _| status(503), 0);
    assert_eq!((calls.len(), end), (1, Step::Fail { reason: Reason::NonRetryable }));

    let mut m = resilient_engine::item::ItemMachine::new(
        chain.clone(),
        0,
        "w".into(),
        vec![Some("k-1".into())],
        resilient_engine::rng::Rng::seeded(1),
    );
    let mut keys = Vec::new();
    let mut now = 0;
    for _ in 0..3 {
        let p = m.poll(now, &store.views).unwrap();
        match p.step {
            Step::Call { idempotency_key, .. } => {
                keys.push(idempotency_key);
                m.on_outcome(now, &status(503), &store.views, None, CallEnd::default()).unwrap();
            }
            Step::Sleep { ms, .. } => now += ms,
            _ => break,
        }
    }
    assert!(keys.len() >= 2 && keys.iter().all(|k| k.as_deref() == Some("k-1")));
}

#[test]
fn deferred_items_do_not_all_wake_at_the_same_time() {
    let chain = chain(&["a"], |c| c.threshold = 1);
    let mut store = Store::new(1);
    let mut now = 0;
    run_item(&chain, &mut store, &mut now, Job::new(7, "w"), |_, _| status(503), 0);
    let mut wakes = std::collections::BTreeSet::new();
    for seed in 0..50 {
        let (end, _, _) = run_item(&chain, &mut store, &mut now, Job::new(100 + seed, "w"), |_, _| status(200), 0);
        match end {
            Step::Defer { retry_at_ms, reason: Reason::CircuitOpen } => {
                assert!(retry_at_ms >= store.views[0].breaker.open_until_ms);
                wakes.insert(retry_at_ms);
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(wakes.len() > 40, "jittered retry_at: {} distinct of 50", wakes.len());
}

#[test]
fn a_network_error_retries_with_backoff_then_falls_to_the_next_provider() {
    let chain = chain(&["a", "b"], |_| {});
    let mut store = Store::new(2);
    let mut now = 0;
    let (end, calls, m) = run_item(
        &chain,
        &mut store,
        &mut now,
        Job::new(8, "w"),
        |i, _| if i == 0 { Outcome::Error { code: "ECONNRESET".into() } } else { status(200) },
        0,
    );
    assert_eq!(calls.iter().filter(|(i, _)| *i == 0).count(), 3, "3 attempts per provider (seed 000)");
    assert_eq!(end, Step::Done { provider: 1, name: "b".into(), fallback: true, checks: vec![] });
    assert!(m.report().attempts.iter().take(2).all(|a| a.wait_cause == Some(WaitCause::Backoff)));
}

#[test]
fn an_input_too_long_for_model_1_goes_to_model_2_with_the_vendors_own_numbers_in_its_attempt() {
    // Anthropic's 400 as it words it; the chain of the chat model 1.2 and Call Chain 2.2.
    let anthropic = Outcome::Status {
        status: 400,
        headers: Default::default(),
        failed_check: None,
        answer: None,
        body: Some(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#
                .into(),
        ),
    };
    let growing = chain(&["claude", "gemini"], |c| c.next_provider_when_input_too_long = Some(true));
    let mut store = Store::new(2);
    let first = move |i: usize, _| if i == 0 { anthropic.clone() } else { status(200) };
    let (end, calls, m) = run_item(&growing, &mut store, &mut 0, Job::new(6, "w"), first, 5);
    assert!(matches!(end, Step::Done { provider: 1, .. }));
    assert_eq!(calls.iter().filter(|c| c.0 == 0).count(), 1, "one request to Model 1");
    let context = m.report().attempts[0].context.expect("the vendor's numbers");
    assert_eq!((context.limit, context.requested), (200_000, 210_000));
    assert_eq!(m.report().attempts[1].context, None);
}
