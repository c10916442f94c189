//! One policy's run in virtual time: executions arrive, workers take them into slots, items
//! call the vendors, sleep, finish, fail or are deferred and re-submitted at their `retry_at`.
use crate::agenda::Event;
use crate::baseline;
use crate::engine_item;
use crate::policy::Policy;
use crate::scenario::Scenario;
use crate::tally::Tally;
use crate::world::{Runner, World};
use resilient_engine::verdict::outcome::Outcome;

/// What a finished run hands to the report.
pub struct Run {
    pub policy: Policy,
    pub tally: Tally,
    pub banned_ms: u64,
    /// The bans of the primary, (from, until) in ms.
    pub bans: Vec<(u64, u64)>,
    pub deferred_at_end: u64,
    pub unfinished: u64,
}

pub fn run(sc: &Scenario, policy: Policy) -> Run {
    let mut w = World::new(sc, policy);
    for (exec, t) in sc.executions.arrivals().enumerate() {
        w.agenda.at(t, Event::Arrive(exec as u32));
    }
    while let Some((t, event)) = w.agenda.next() {
        if t > sc.horizon_ms {
            break;
        }
        w.now = t;
        match event {
            Event::Arrive(exec) => w.fleet.queue.push_back(exec),
            Event::Resubmit(exec) => {
                w.deferred_now -= 1;
                w.fleet.queue.push_back(exec);
            }
            Event::Wake(id) => resume(&mut w, id),
            Event::Answer(id, call) => {
                // A late answer of a call its item aborted (or of an item gone) is ignored.
                if let Some((engine_call, outcome)) = w.take_answer(id, call) {
                    answered(&mut w, id, engine_call, outcome);
                }
            }
            Event::Hedge(id, timer) => {
                if w.hedge_due(id, timer) {
                    engine_item::hedge_due(&mut w, id);
                }
            }
        }
        dispatch(&mut w);
    }
    let banned_ms = w.vendors.iter().map(|v| v.banned_ms(sc.horizon_ms)).sum();
    let t = &w.tally;
    let unfinished = sc.executions.total() as u64 - t.done - t.lost - w.deferred_now;
    let bans = w.vendors[0].bans.clone();
    Run { policy, banned_ms, bans, deferred_at_end: w.deferred_now, unfinished, tally: w.tally }
}

/// Give queued executions to free slots until one or the other runs out.
fn dispatch(w: &mut World) {
    while !w.fleet.queue.is_empty() {
        let Some(worker) = w.fleet.take_slot() else { return };
        let exec = w.fleet.queue.pop_front().expect("not empty");
        let id = w.start(exec, worker);
        match w.policy {
            Policy::RetryOnFail | Policy::SleepLoop => w.send(id, 0, None, None),
            _ => engine_item::step(w, id),
        }
    }
}

/// A sleeping item wakes: the engine polls again, a baseline tries again.
fn resume(w: &mut World, id: u32) {
    match w.item(id).runner {
        Runner::Engine(_) => engine_item::step(w, id),
        Runner::RetryOnFail { provider, .. } => w.send(id, provider, None, None),
        Runner::SleepLoop => w.send(id, 0, None, None),
    }
}

fn answered(w: &mut World, id: u32, engine_call: Option<u32>, outcome: Outcome) {
    match w.item(id).runner {
        Runner::Engine(_) => engine_item::answered(w, id, engine_call, outcome),
        _ => baseline::answered(w, id, outcome),
    }
}
