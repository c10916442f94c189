//! One execution's items in virtual time, as the node drives them: poll, write, call, hand the
//! answer in, record it, and poll again when the engine says; an item waiting in its window's
//! line polls again when a poll or an outcome wakes it. Shared by the tests that run many real
//! item machines against vendors (`tests/concurrency.rs`, `tests/admission.rs`).
use super::Store;
use resilient_engine::config::Chain;
use resilient_engine::item::record::record;
use resilient_engine::item::{CallEnd, ItemMachine, Step};
use resilient_engine::limits::token_limit::Usage;
use resilient_engine::verdict::outcome::Outcome;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a vendor answers a call, and after how long.
pub struct Reply {
    pub after_ms: u64,
    pub outcome: Outcome,
    pub usage: Option<Usage>,
    /// The vendor holds the call until its answer (it counts towards what it takes at once).
    pub held: bool,
}

/// The vendors behind a chain's providers.
pub trait Vendors {
    /// A call to `provider` arrives at `now`.
    fn call(&mut self, provider: usize, now: u64) -> Reply;
    /// Its reply went out: what the vendor held for it is free.
    fn replied(&mut self, _provider: usize, _reply: &Reply) {}
}

/// How the execution's items ended, and what each provider saw.
#[derive(Debug, Default)]
pub struct Ends {
    pub done: u32,
    pub deferred: u32,
    pub failed: u32,
    /// When the last item ended (the store's clock).
    pub ended_at: u64,
    /// Per provider: the most calls out at once, and what the calls spent as their answers said.
    pub most_at_once: Vec<u32>,
    pub spent_micros: Vec<u64>,
}

impl Ends {
    fn end(&mut self, step: &Step, now: u64) {
        match step {
            Step::Done { .. } => self.done += 1,
            Step::Defer { .. } => self.deferred += 1,
            Step::Fail { .. } => self.failed += 1,
            other => panic!("not an end: {other:?}"),
        }
        self.ended_at = self.ended_at.max(now);
    }

    /// Every item ended once.
    pub fn ended(&self) -> u32 {
        self.done + self.deferred + self.failed
    }
}

// A test's event queue: an answer's size costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
enum Event {
    Poll(usize),
    /// A wait in line ran out (the node's `Line.wait` bound), if still waiting.
    LookAgain(usize),
    Answer {
        item: usize,
        provider: usize,
        reply: Reply,
    },
}

/// The longest wait in line that is a look again, not a wait to be woken.
const LOOK_AGAIN_MAX_MS: u64 = 1_000;

/// Run `machines` (joined to their pool and seated as the test wants) from `start` on `store`
/// until every one has ended.
pub fn run(
    chain: &Arc<Chain>,
    machines: &mut [ItemMachine],
    store: &mut Store,
    start: u64,
    vendors: &mut impl Vendors,
) -> Ends {
    let n = machines.len();
    let slots = Slots { worker: vec![0; n], per_worker: n, execution: vec![0; n], store: vec![0; n] };
    run_in_slots(chain, machines, std::slice::from_mut(store), start, vendors, &slots)
}

/// Queue mode's workers: which worker runs each machine's execution, and how many executions a
/// worker runs at once (n8n's `--concurrency`); the next one in order starts as one ends.
pub struct Slots {
    pub worker: Vec<usize>,
    pub per_worker: usize,
    /// Each machine's execution (its pool: a wake names a member of the waker's pool).
    pub execution: Vec<usize>,
    /// Each machine's store: the fleet's, or its worker's memory once the shared store failed.
    pub store: Vec<usize>,
}

/// `run`, each machine started when its worker has a free slot.
pub fn run_in_slots(
    chain: &Arc<Chain>,
    machines: &mut [ItemMachine],
    stores: &mut [Store],
    start: u64,
    vendors: &mut impl Vendors,
    slots: &Slots,
) -> Ends {
    let n = chain.providers.len();
    let mut ends = Ends { most_at_once: vec![0; n], spent_micros: vec![0; n], ..Default::default() };
    let mut events: BTreeMap<(u64, u64), Event> = BTreeMap::new();
    let mut seq = 0u64;
    let mut at = |events: &mut BTreeMap<(u64, u64), Event>, t: u64, e: Event| {
        seq += 1;
        events.insert((t, seq), e);
    };
    // Per worker: the machines started, and those not started yet, in order.
    let mut pending: BTreeMap<usize, (usize, std::collections::VecDeque<usize>)> = BTreeMap::new();
    for (i, &w) in slots.worker.iter().enumerate() {
        let (started, line) = pending.entry(w).or_default();
        if *started < slots.per_worker {
            *started += 1;
            at(&mut events, start, Event::Poll(i));
        } else {
            line.push_back(i);
        }
    }
    // The node's side of a line: who waits, by their number in the pool; a wake names them.
    let members: Vec<(usize, u32)> =
        machines.iter().enumerate().map(|(i, m)| (slots.execution[i], m.member())).collect();
    let mut waiting: BTreeMap<(usize, u32), usize> = BTreeMap::new();
    let mut out = vec![0u32; n];
    while let Some(((now, _), event)) = events.pop_first() {
        assert!(now < start + 86_400_000, "the run ends within a day");
        let mut ended = None;
        let i = match event {
            Event::LookAgain(i) => {
                if waiting.remove(&members[i]).is_some() {
                    at(&mut events, now, Event::Poll(i));
                }
                i
            }
            Event::Poll(i) => {
                let store = &mut stores[slots.store[i]];
                let poll = machines[i].poll(now, &store.views).unwrap();
                if let Some(w) = &poll.writes {
                    store.apply(w);
                }
                match poll.step {
                    Step::Call { provider, .. } => {
                        out[provider] += 1;
                        ends.most_at_once[provider] = ends.most_at_once[provider].max(out[provider]);
                        let reply = vendors.call(provider, now);
                        at(&mut events, now + reply.after_ms, Event::Answer { item: i, provider, reply });
                    }
                    Step::Sleep { ms, .. } => at(&mut events, now + ms, Event::Poll(i)),
                    Step::Queue { ms, .. } => {
                        waiting.insert(members[i], i);
                        // A turn at the fleet's limit looks again after a short while (a slot
                        // may free elsewhere in the fleet); a window's line waits to be woken
                        // (its bound is the budget: a wake lost would show as an item left).
                        if ms <= LOOK_AGAIN_MAX_MS {
                            at(&mut events, now + ms, Event::LookAgain(i));
                        }
                    }
                    Step::Await { .. } => unreachable!("no hedging here"),
                    end => {
                        ends.end(&end, now);
                        ended = Some(i);
                    }
                }
                i
            }
            Event::Answer { item, provider, reply } => {
                out[provider] -= 1;
                vendors.replied(provider, &reply);
                let store = &mut stores[slots.store[item]];
                let m = &mut machines[item];
                let end = CallEnd { usage: reply.usage, delivered_chars: None, longest_gap_ms: None };
                let effect = m.on_outcome(now, &reply.outcome, &store.views, None, end).unwrap();
                if let Some(t) = &effect.tokens {
                    ends.spent_micros[provider] += t.used.cost_micros;
                }
                if let Some(w) = &record(chain, &store.views[effect.provider], &effect, now).writes {
                    store.apply(w);
                }
                match m.finished() {
                    Some(step) => {
                        ends.end(&step.clone(), now);
                        ended = Some(item);
                    }
                    None => at(&mut events, m.wake_at().max(now), Event::Poll(item)),
                }
                item
            }
        };
        // An execution ended: its worker starts the next one waiting for a slot.
        if let Some(next) = ended.and_then(|e| pending.get_mut(&slots.worker[e])?.1.pop_front()) {
            at(&mut events, now, Event::Poll(next));
        }
        for w in machines[i].take_wake() {
            if let Some(next) = waiting.remove(&(slots.execution[i], w)) {
                at(&mut events, now, Event::Poll(next));
            }
        }
    }
    assert!(waiting.is_empty(), "items left in line: {waiting:?}");
    ends
}
