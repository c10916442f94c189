//! The state of one policy's run in virtual time (the clock, the agenda, vendors, fleet, items in
//! slots, provider rows, tally) and what an item can do in it: call a vendor (several calls at
//! once when it hedges, each with a world-unique id), sleep, set its hedge timer, leave its slot. What drives the items is in `run`, `engine_item` and `baseline`, which depend on this.
use crate::agenda::{Agenda, Event};
use crate::engine_chain;
use crate::fleet::Fleet;
use crate::policy::Policy;
use crate::scenario::Scenario;
use crate::tally::Tally;
use crate::vendor::Vendor;
use resilient_engine::choose::chain::{ProviderView, Writes};
use resilient_engine::config::Chain;
use resilient_engine::item::ItemMachine;
use resilient_engine::rng::Rng;
use resilient_engine::verdict::outcome::Outcome;
use std::sync::Arc;

/// How an item in a slot decides what to do next.
pub enum Runner {
    /// The engine's step machine.
    Engine(Box<ItemMachine>),
    /// n8n's Retry On Fail: `tries` made on `provider` so far.
    RetryOnFail { provider: usize, tries: u32 },
    /// Seed 000's retry-forever loop.
    SleepLoop,
}

/// A call in flight: its answer is delivered when its `Answer` event comes due, unless it was
/// aborted (or its item ended) before.
pub struct Call {
    /// Unique in the world: a slot is reused, a call id never.
    pub id: u64,
    /// The engine's number for it (a hedging chain's `CallTag::call`).
    pub engine_call: Option<u32>,
    pub outcome: Outcome,
}

pub struct Item {
    pub exec: u32,
    pub worker: usize,
    pub runner: Runner,
    pub calls: Vec<Call>,
    /// The hedge timer that counts (world-unique); an older one is ignored when it comes due.
    pub hedge_timer: Option<u64>,
}

pub enum End {
    Done { by_fallback: bool },
    Lost,
    Deferred { retry_at_ms: u64 },
}

pub struct World<'s> {
    pub sc: &'s Scenario,
    pub policy: Policy,
    pub now: u64,
    pub agenda: Agenda,
    pub vendors: Vec<Vendor<'s>>,
    pub fleet: Fleet,
    pub items: Vec<Option<Item>>,
    free_items: Vec<u32>,
    /// Provider rows: one set for the shared store, else one set per worker.
    pub rows: Vec<Vec<ProviderView>>,
    pub chain: Option<Arc<Chain>>,
    rng: Rng,
    pub tally: Tally,
    /// Per execution: how many times it was deferred (names its calls' holder).
    generation: Vec<u32>,
    pub deferred_now: u64,
    /// The last call or timer id handed out.
    last_id: u64,
    /// Per execution: done already (a second end would be a double serve, counted in the tally).
    served: Vec<bool>,
}

impl<'s> World<'s> {
    pub fn new(sc: &'s Scenario, policy: Policy) -> Self {
        let mut rng = Rng::seeded(sc.seed);
        let mut vendors = vec![Vendor::new(&sc.vendor, Rng::seeded(rng.next_u64()))];
        if let Some(fb) = &sc.fallback {
            vendors.push(Vendor::new(fb, Rng::seeded(rng.next_u64())));
        }
        let chain = engine_chain::of(policy, sc);
        let sets = if policy.shared() { 1 } else { sc.workers };
        let providers = vendors.len();
        World {
            sc,
            policy,
            now: 0,
            agenda: Agenda::default(),
            vendors,
            fleet: Fleet::new(sc.workers, sc.concurrency),
            items: Vec::new(),
            free_items: Vec::new(),
            rows: vec![vec![ProviderView::default(); providers]; sets],
            chain,
            rng,
            tally: Tally::new(
                sc.vendor.quota.as_ref().map(|q| q.period_ms),
                sc.vendor.recovered_ms().filter(|&r| r < sc.horizon_ms),
            ),
            generation: vec![0; sc.executions.total() as usize],
            deferred_now: 0,
            last_id: 0,
            served: vec![false; sc.executions.total() as usize],
        }
    }

    /// Execution `exec` takes a slot on `worker`: a new item with the policy's runner; its id.
    pub fn start(&mut self, exec: u32, worker: usize) -> u32 {
        let runner = match self.policy {
            Policy::RetryOnFail => Runner::RetryOnFail { provider: 0, tries: 0 },
            Policy::SleepLoop => Runner::SleepLoop,
            _ => {
                let chain = self.chain.clone().expect("engine policies have a chain");
                let holder = format!("e{exec}.{}", self.generation[exec as usize]);
                Runner::Engine(Box::new(ItemMachine::new(
                    chain,
                    self.now,
                    holder,
                    vec![],
                    Rng::seeded(self.rng.next_u64()),
                )))
            }
        };
        let item = Item { exec, worker, runner, calls: Vec::new(), hedge_timer: None };
        match self.free_items.pop() {
            Some(id) => {
                self.items[id as usize] = Some(item);
                id
            }
            None => {
                self.items.push(Some(item));
                (self.items.len() - 1) as u32
            }
        }
    }

    pub fn item(&mut self, id: u32) -> &mut Item {
        self.items[id as usize].as_mut().expect("a live item")
    }

    fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    /// A request from item `id` arrives at `provider` now; its answer comes back after the
    /// vendor's latency, or as `TIMEOUT` at the deadline if that is sooner. `engine_call`: the
    /// engine's number for the call, handed back with its answer.
    pub fn send(&mut self, id: u32, provider: usize, deadline_ms: Option<u64>, engine_call: Option<u32>) {
        let now = self.now;
        let in_outage = provider == 0 && self.sc.vendor.outage_at(now).is_some();
        let reply = self.vendors[provider].answer(now);
        self.tally.request(provider, now, reply.kind, in_outage);
        let (outcome, after) = match deadline_ms {
            Some(d) if reply.latency_ms > d => (Outcome::Error { code: "TIMEOUT".into() }, d),
            _ => (reply.outcome, reply.latency_ms),
        };
        let call = self.next_id();
        self.item(id).calls.push(Call { id: call, engine_call, outcome });
        self.agenda.at(now + after, Event::Answer(id, call));
    }

    /// The answer of call `call` of the item in slot `id`, if that call is still out there:
    /// (the engine's number for it, the outcome). `None`: a late answer of an aborted call.
    pub fn take_answer(&mut self, id: u32, call: u64) -> Option<(Option<u32>, Outcome)> {
        let item = self.items.get_mut(id as usize)?.as_mut()?;
        let k = item.calls.iter().position(|c| c.id == call)?;
        let c = item.calls.swap_remove(k);
        Some((c.engine_call, c.outcome))
    }

    /// The item aborts its call numbered `engine_call` by the engine: its answer is ignored.
    pub fn abort(&mut self, id: u32, engine_call: u32) {
        self.item(id).calls.retain(|c| c.engine_call != Some(engine_call));
    }

    /// Ask item `id`'s engine for a hedge `ms` from now (replaces any earlier timer).
    pub fn hedge_timer(&mut self, id: u32, ms: u64) {
        let timer = self.next_id();
        self.item(id).hedge_timer = Some(timer);
        self.agenda.at(self.now + ms, Event::Hedge(id, timer));
    }

    /// Item `id`'s hedge timer is off (no hedge to ask for now).
    pub fn no_hedge_timer(&mut self, id: u32) {
        self.item(id).hedge_timer = None;
    }

    /// Whether timer `timer` is the live hedge timer of the item in slot `id` (then it is spent).
    pub fn hedge_due(&mut self, id: u32, timer: u64) -> bool {
        match self.items.get_mut(id as usize).and_then(|i| i.as_mut()) {
            Some(item) if item.hedge_timer == Some(timer) => {
                item.hedge_timer = None;
                true
            }
            _ => false,
        }
    }

    pub fn sleep(&mut self, id: u32, ms: u64) {
        self.agenda.at(self.now + ms, Event::Wake(id));
    }

    /// The item leaves its slot.
    pub fn finish(&mut self, id: u32, end: End) {
        let item = self.items[id as usize].take().expect("a live item");
        self.free_items.push(id);
        self.fleet.release(item.worker);
        match end {
            End::Done { by_fallback } => {
                let arrived = self.sc.executions.arrival_ms(item.exec);
                self.tally.served_twice += std::mem::replace(&mut self.served[item.exec as usize], true) as u64;
                self.tally.done(self.now, by_fallback, self.now.saturating_sub(arrived));
            }
            End::Lost => self.tally.lost += 1,
            End::Deferred { retry_at_ms } => {
                self.tally.deferrals += 1;
                self.deferred_now += 1;
                self.generation[item.exec as usize] += 1;
                self.agenda.at(retry_at_ms.max(self.now + 1), Event::Resubmit(item.exec));
            }
        }
    }

    /// The rows an item on `worker` reads and writes.
    pub fn scope(&self, worker: usize) -> usize {
        if self.policy.shared() {
            0
        } else {
            worker
        }
    }
}

/// Apply an engine write to the rows (single-threaded virtual time: no lost races), as a store
/// does once it accepts them: the engine's own `row_text::apply`, every row kind included.
pub fn apply(views: &mut [ProviderView], w: &Writes) {
    let v = &mut views[w.provider];
    debug_assert!(w.breaker.as_ref().is_none_or(|b| b.version == v.breaker.version + 1));
    resilient_engine::rows::row_text::apply(v, w);
}
