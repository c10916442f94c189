//! Key Quotas through the engine's boundary, as the node drives it: an item's poll reads its
//! providers' row texts and then its key's (`Chain::row_keys`), and every write comes back as
//! row texts, the key's quota row named by `RowWrite::key`. The store here keeps texts by
//! (name, kind) and compares versions, as the real stores do.
use resilient_engine::config::{key_quotas::KeyQuotaConfig, Chain, ChainConfig, ProviderConfig};
use resilient_engine::item::session::Session;
use resilient_engine::item::{CallEnd, Step};
use resilient_engine::limits::token_limit::{TokenFacts, Usage, DAY_MS};
use resilient_engine::rng::Rng;
use resilient_engine::rows::row_text::{RowWrites, ROW_KINDS};
use resilient_engine::verdict::outcome::Outcome;
use resilient_engine::verdict::reason::Reason;
use std::collections::HashMap;
use std::sync::Arc;

const T: u64 = 1_796_601_600_000; // 2026-12-07T00:00:00Z

#[derive(Default)]
struct Texts(HashMap<(String, String), (u64, String)>);

impl Texts {
    fn read(&self, keys: &[String]) -> Vec<String> {
        let text = |k: &String, kind: &str| {
            self.0.get(&(k.clone(), kind.to_string())).map(|(v, json)| format!("{v}|{json}")).unwrap_or_default()
        };
        keys.iter().flat_map(|k| ROW_KINDS.map(|kind| text(k, kind))).collect()
    }

    /// Compare-and-set, every row or none: the provider's rows under its name, a row naming its
    /// own key (the key's quota row) under that.
    fn write(&mut self, provider: &str, w: &RowWrites) -> bool {
        let at = |r: &resilient_engine::rows::row_text::RowWrite| {
            (r.key.clone().unwrap_or_else(|| provider.to_string()), r.kind.to_string())
        };
        if w.rows.iter().any(|r| self.0.get(&at(r)).map_or(0, |(v, _)| *v) != r.expected) {
            return false;
        }
        for r in &w.rows {
            self.0.insert(at(r), (r.version, r.json.clone()));
        }
        true
    }
}

/// One provider, `llm`, under Fair Share Key `key` with `quotas` (measure, per, limit).
fn config(key: &str, quotas: &[(&str, &str, f64)]) -> ChainConfig {
    ChainConfig {
        providers: vec![ProviderConfig { name: "llm".into(), idempotent: true, ..Default::default() }],
        fair_share_key: key.into(),
        key_quotas: quotas
            .iter()
            .map(|(m, p, l)| KeyQuotaConfig { measure: m.to_string(), per: p.to_string(), limit: *l })
            .collect(),
        ..Default::default()
    }
}

fn chain(key: &str, quotas: &[(&str, &str, f64)]) -> Arc<Chain> {
    Arc::new(config(key, quotas).validate().expect("valid"))
}

/// One item of `chain` at `now`: its first poll's step, and if it called, its answer with
/// `usage` recorded. Every write goes through the store.
fn run_item(store: &mut Texts, chain: &Arc<Chain>, n: u64, now: u64, usage: Usage) -> Step {
    let keys = chain.row_keys();
    let mut s = Session::new(chain.clone(), now, format!("item-{n}"), Vec::new(), Rng::seeded(n));
    s.provider_tokens(0, TokenFacts { chars: 4_000, max_output: Some(500), ..Default::default() });
    let polled = s.poll(now, &store.read(&keys)).unwrap();
    if let Some(w) = &polled.writes {
        assert!(store.write(&keys[w.provider], w), "one writer: no race");
    }
    if let Some(end) = polled.end {
        return end.step;
    }
    assert!(matches!(polled.step, Step::Call { .. }), "{:?}", polled.step);
    let rec =
        s.outcome(now + 300, &Outcome::status(200, Default::default()), None, CallEnd::used(Some(usage))).unwrap();
    if let Some(w) = &rec.writes {
        assert!(store.write(&keys[w.provider], w));
    }
    rec.end.expect("served").step
}

#[test]
fn a_key_past_its_tokens_per_day_is_deferred_to_tomorrow_and_another_key_goes_on() {
    let mut store = Texts::default();
    let a = chain("customer-a", &[("tokens", "day", 3_000.0)]);
    let b = chain("customer-b", &[("tokens", "day", 3_000.0)]);
    assert_eq!(a.row_keys(), vec!["llm".to_string(), "key:customer-a".to_string()]);
    let used = Usage { input: 900, output: 300, ..Default::default() };
    for n in 0..3 {
        let step = run_item(&mut store, &a, n, T + n * 1_000, used);
        assert!(matches!(step, Step::Done { .. }), "item {n}: {step:?}");
    }
    // 3,600 tokens used of 3,000: the third passed it by its own size, the fourth waits a day.
    match run_item(&mut store, &a, 3, T + 5_000, used) {
        // Spread over the next `defer_spread_ms`, so a day's deferred items do not all come back at once.
        Step::Defer { retry_at_ms, reason: Reason::KeyQuota } => {
            assert!((T + DAY_MS..=T + DAY_MS + 10_000).contains(&retry_at_ms), "{retry_at_ms}")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(run_item(&mut store, &b, 4, T + 6_000, used), Step::Done { .. }), "b has its own row");
    assert!(matches!(run_item(&mut store, &a, 5, T + DAY_MS + 1, used), Step::Done { .. }), "a new day");
    // The provider's rows hold no quota: the key's row is under its own name.
    assert!(!store.0.contains_key(&("llm".to_string(), "quota".to_string())));
    let row = &store.0[&("key:customer-a".to_string(), "quota".to_string())].1;
    assert!(row.contains(r#""counts":[4,"#), "tokens (1) per day (1): slot 4: {row}");
}

#[test]
fn requests_per_minute_count_each_call_and_a_chain_without_quotas_reads_no_key() {
    let mut store = Texts::default();
    let a = chain("workflow:7", &[("requests", "minute", 2.0)]);
    for n in 0..2 {
        assert!(matches!(run_item(&mut store, &a, n, T + n, Usage::default()), Step::Done { .. }));
    }
    // Call Chain's line (wait_in_line) is off here: the minute's end is past nothing, the item defers.
    match run_item(&mut store, &a, 2, T + 10_000, Usage::default()) {
        Step::Defer { retry_at_ms, reason: Reason::KeyQuota } => assert!(retry_at_ms >= T + 60_000),
        other => panic!("{other:?}"),
    }
    assert_eq!(chain("k", &[]).row_keys(), vec!["llm".to_string()]);
}

#[test]
fn quotas_are_checked_naming_the_field() {
    let bad = |quotas: &[(&str, &str, f64)], key: &str| config(key, quotas).validate().unwrap_err().to_string();
    assert!(bad(&[("tokens", "day", 10.0)], "").contains("key_quotas"), "no key to count under");
    for wrong in [("tokens", "week", 10.0), ("calls", "day", 10.0), ("requests", "day", 1.5), ("spend", "day", 0.0)] {
        assert!(bad(&[wrong], "k").contains("key_quotas: quota 1 needs a measure"), "{wrong:?}");
    }
    assert!(bad(&[("spend", "day", 1.0), ("spend", "day", 2.0)], "k").contains("key_quotas: quota 2 needs"), "twice");
    let guard = ChainConfig { node: "guard".into(), type_version: 2.2, ..config("k", &[("requests", "day", 5.0)]) };
    assert!(guard.validate().unwrap_err().to_string().contains("Check Provider"), "refused, not counted half");
    let spend = chain("k", &[("spend", "month", 0.5)]);
    assert_eq!(spend.quotas.as_ref().unwrap().list[0].limit, 500_000, "an amount, in millionths");
}
