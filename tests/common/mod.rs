//! An in-memory stand-in for the shared store, applying `Writes` with version checks, so the
//! engine's scenarios run end to end (the real stores live in the node and are tested there).
#![allow(dead_code)]
use resilient_engine::chain::{ProviderView, Writes};
use resilient_engine::config::{Chain, ChainConfig, ProviderConfig};
use resilient_engine::outcome::Outcome;
use resilient_engine::record::record;
use resilient_engine::retry_after::HintHeaders;
use resilient_engine::rng::Rng;
use resilient_engine::step::{ItemMachine, Step};
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
    Outcome::Status { status: s, headers, failed_check: None, body: body.map(str::to_string) }
}

#[derive(Default)]
pub struct Store {
    pub views: Vec<ProviderView>,
}

impl Store {
    pub fn new(n: usize) -> Self {
        Store { views: vec![ProviderView::default(); n] }
    }
    pub fn apply(&mut self, w: &Writes) {
        let v = &mut self.views[w.provider];
        if let Some(b) = &w.breaker {
            assert_eq!(b.version, v.breaker.version + 1, "breaker version must rise by one");
            v.breaker = b.clone();
        }
        if let Some(g) = &w.gate {
            assert_eq!(g.version, v.gate.version + 1);
            v.gate = g.clone();
        }
        if let Some(f) = &w.in_flight {
            assert_eq!(f.version, v.in_flight.version + 1);
            v.in_flight = f.clone();
        }
        if let Some(l) = &w.latency {
            assert_eq!(l.version, v.latency.version + 1);
            v.latency = l.clone();
        }
        if let Some(b) = &w.budget {
            assert_eq!(b.version, v.budget.version + 1);
            v.budget = b.clone();
        }
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
                let effect = m.on_outcome(*now, &outcome, &store.views).unwrap();
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
