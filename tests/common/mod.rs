//! An in-memory stand-in for the shared store, applying `Writes` with version checks, so the
//! engine's scenarios run end to end (the real stores live in the node and are tested there).
#![allow(dead_code)]
pub mod execution;
use resilient_engine::choose::chain::{ProviderView, Writes};
use resilient_engine::config::{Chain, ChainConfig, ProviderConfig};
use resilient_engine::facts::retry_after::HintHeaders;
use resilient_engine::item::record::record;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{ItemMachine, Step};
use resilient_engine::rng::Rng;
use resilient_engine::verdict::outcome::Outcome;
use std::sync::Arc;

pub fn chain(names: &[&str], tweak: impl FnOnce(&mut ChainConfig)) -> Arc<Chain> {
    let mut cfg = ChainConfig {
        providers: names.iter().map(|n| ProviderConfig { name: n.to_string(), ..Default::default() }).collect(),
        ..Default::default()
    };
    tweak(&mut cfg);
    Arc::new(cfg.validate().expect("valid config"))
}

pub fn status(s: u16) -> Outcome {
    Outcome::status(s, HintHeaders::default())
}

pub fn retry_after(s: u16, v: &str) -> Outcome {
    Outcome::status(s, HintHeaders::default().with("retry-after", v))
}

/// A status with these hint headers and, when some, this body.
pub fn answer(s: u16, headers: &[(&str, &str)], body: Option<&str>) -> Outcome {
    let headers = headers.iter().fold(HintHeaders::default(), |h, (n, v)| h.with(n, *v));
    Outcome::Status { status: s, headers, failed_check: None, answer: None, body: body.map(str::to_string) }
}

#[derive(Default)]
pub struct Store {
    pub views: Vec<ProviderView>,
}

impl Store {
    pub fn new(n: usize) -> Self {
        Store { views: vec![ProviderView::default(); n] }
    }
    /// Applies a write as a store does once it accepts it: the engine's own `row_text::apply`
    /// (every row kind), after checking each written row's version rises by one.
    pub fn apply(&mut self, w: &Writes) {
        let v = &self.views[w.provider];
        let rising = |new: Option<u64>, old: u64, kind: &str| {
            if let Some(n) = new {
                assert_eq!(n, old + 1, "{kind} version must rise by one");
            }
        };
        rising(w.breaker.as_ref().map(|r| r.version), v.breaker.version, "breaker");
        rising(w.gate.as_ref().map(|r| r.version), v.gate.version, "gate");
        rising(w.in_flight.as_ref().map(|r| r.version), v.in_flight.version, "in_flight");
        rising(w.latency.as_ref().map(|r| r.version), v.latency.version, "latency");
        rising(w.budget.as_ref().map(|r| r.version), v.budget.version, "budget");
        rising(w.limit.as_ref().map(|r| r.version), v.limit.version, "limit");
        rising(w.tokens.as_ref().map(|r| r.version), v.tokens.version, "tokens");
        resilient_engine::rows::row_text::apply(&mut self.views[w.provider], w);
    }
}

/// Who runs an item: its jitter seed, the holder name its leases carry, its Idempotency-Keys.
pub struct Job {
    pub seed: u64,
    pub holder: String,
    pub keys: Vec<Option<String>>,
}

impl Job {
    pub fn new(seed: u64, holder: &str) -> Self {
        Job { seed, holder: holder.into(), keys: Vec::new() }
    }

    pub fn keys(mut self, keys: Vec<Option<String>>) -> Self {
        self.keys = keys;
        self
    }
}

/// Runs one item to its end against `store`; `provider` answers each call. Time advances by
/// each sleep and by `call_ms` per call. Returns the final step and the calls made (provider, t).
pub fn run_item(
    chain: &Arc<Chain>,
    store: &mut Store,
    now: &mut u64,
    job: Job,
    mut provider: impl FnMut(usize, u64) -> Outcome,
    call_ms: u64,
) -> (Step, Vec<(usize, u64)>, ItemMachine) {
    let mut m = ItemMachine::new(chain.clone(), *now, job.holder, job.keys, Rng::seeded(job.seed));
    let mut calls = Vec::new();
    for _ in 0..10_000 {
        let poll = m.poll(*now, &store.views).unwrap();
        if let Some(w) = &poll.writes {
            store.apply(w);
        }
        match poll.step {
            Step::Call { provider: i, .. } => {
                calls.push((i, *now));
                let outcome = provider(i, *now);
                *now += call_ms;
                let effect = m.on_outcome(*now, &outcome, &store.views, None, CallEnd::default()).unwrap();
                let rec = record(chain, &store.views[i], &effect, *now);
                if let Some(w) = &rec.writes {
                    store.apply(w);
                }
            }
            Step::Sleep { ms, .. } => *now += ms,
            end => return (end, calls, m),
        }
    }
    panic!("item did not finish");
}
