//! Answer checks as an item lives them: a schema miss moves on without counting against the
//! provider; a provider that can be asked again gets one repair round first (one more call,
//! counted as one); a cut answer or an empty one is never repaired.
mod common;
use common::{chain, Store};
use resilient_engine::config::ChainConfig;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{ItemMachine, Step};
use resilient_engine::rng::Rng;
use resilient_engine::verdict::answer_check::{AnswerFacts, SchemaError};
use resilient_engine::verdict::outcome::{Health, Outcome};
use resilient_engine::verdict::reason::Reason;

fn miss() -> Outcome {
    Outcome::answered(
        200,
        AnswerFacts {
            schema_checked: true,
            schema_errors: vec![SchemaError { path: "/title".into(), message: "required".into() }],
            ..Default::default()
        },
    )
}

fn good() -> Outcome {
    Outcome::answered(200, AnswerFacts { schema_checked: true, finish: Some("stop".into()), ..Default::default() })
}

fn cut() -> Outcome {
    Outcome::answered(200, AnswerFacts { finish: Some("length".into()), ..Default::default() })
}

/// Runs one item; `answer(provider, call number)` answers. Returns the end and the calls made
/// as (provider, repair).
fn run(repairs: bool, mut answer: impl FnMut(usize, usize) -> Outcome) -> (Step, Vec<(usize, bool)>, ItemMachine) {
    let c = chain(&["llm", "backup"], |c: &mut ChainConfig| c.providers[0].repairs = repairs);
    let store = Store::new(2);
    let mut m = ItemMachine::new(c, 0, "h".into(), vec![], Rng::seeded(7));
    let mut calls = Vec::new();
    let mut now = 0;
    loop {
        let poll = m.poll(now, &store.views).unwrap();
        match poll.step {
            Step::Call { provider, repair, .. } => {
                calls.push((provider, repair));
                now += 10;
                m.on_outcome(now, &answer(provider, calls.len()), &store.views, None, CallEnd::default()).unwrap();
            }
            Step::Sleep { ms, .. } => now += ms,
            end => return (end, calls, m),
        }
    }
}

#[test]
fn a_schema_miss_moves_on_at_once_and_is_not_the_providers_failure() {
    let (end, calls, m) = run(false, |p, _| if p == 0 { miss() } else { good() });
    assert!(matches!(end, Step::Done { provider: 1, fallback: true, .. }), "{end:?}");
    assert_eq!(calls, [(0, false), (1, false)]);
    let first = &m.report().attempts[0];
    assert_eq!((first.health, first.check.map(|c| c.name())), (Health::Neutral, Some("schema")));
    assert_eq!(first.errors[0].path, "/title");
    if let Step::Done { checks, .. } = end {
        assert_eq!(checks, ["not_empty", "not_cut", "not_refused", "schema"]);
    }
}

#[test]
fn one_repair_round_asks_the_same_provider_again_and_its_answer_serves() {
    let (end, calls, m) = run(true, |p, n| if p == 0 && n == 1 { miss() } else { good() });
    assert!(matches!(end, Step::Done { provider: 0, fallback: false, .. }), "{end:?}");
    assert_eq!(calls, [(0, false), (0, true)], "the second call is the repair round");
    assert_eq!(m.counters()[0].calls, 2, "the repair round is a call of its provider");
    assert_eq!(m.counters()[0].failures, 0);
}

#[test]
fn a_repair_that_misses_again_moves_on_and_a_provider_is_repaired_once() {
    let (end, calls, _) = run(true, |p, _| if p == 0 { miss() } else { good() });
    assert!(matches!(end, Step::Done { provider: 1, .. }), "{end:?}");
    assert_eq!(calls, [(0, false), (0, true), (1, false)]);
}

#[test]
fn a_cut_answer_is_never_repaired_it_moves_on() {
    let (end, calls, _) = run(true, |p, _| if p == 0 { cut() } else { good() });
    assert!(matches!(end, Step::Done { provider: 1, .. }), "{end:?}");
    assert_eq!(calls, [(0, false), (1, false)]);
}

#[test]
fn with_none_left_the_item_fails_check_failed_never_served() {
    let (end, _, _) = run(true, |_, _| miss());
    assert_eq!(end, Step::Fail { reason: Reason::CheckFailed });
}
