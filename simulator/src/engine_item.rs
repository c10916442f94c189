//! An item driven by the engine itself: `poll` against its rows, write what it says, carry out
//! the step; on an answer, `on_outcome` then `record` into the same rows, and poll again.
use crate::world::{apply, End, Runner, World};
use resilient_engine::breaker::Phase;
use resilient_engine::record::record;
use resilient_engine::step::Step;

/// Poll the item's step machine against its rows and carry out the step.
pub fn step(w: &mut World, id: u32) {
    let now = w.now;
    let worker = w.item(id).worker;
    let scope = w.scope(worker);
    let item = w.items[id as usize].as_mut().expect("a live item");
    let Runner::Engine(machine) = &mut item.runner else { unreachable!("an engine item") };
    let views = &mut w.rows[scope];
    let poll = machine.poll(now, views).expect("views match the chain");
    if let Some(writes) = &poll.writes {
        apply(views, writes);
    }
    match poll.step {
        Step::Call { provider, deadline_ms, probe, .. } => {
            w.tally.probes += (probe && provider == 0) as u64;
            w.send(id, provider, Some(deadline_ms));
        }
        Step::Sleep { ms, .. } => w.sleep(id, ms),
        Step::Done { fallback, .. } => w.finish(id, End::Done { by_fallback: fallback }),
        Step::Defer { retry_at_ms, .. } => w.finish(id, End::Deferred { retry_at_ms }),
        Step::Fail { .. } => w.finish(id, End::Lost),
        Step::Await { .. } => unreachable!("only a hedging chain awaits"),
    }
}

/// The item's answer came back: `on_outcome`, `record` into the rows, then the next step.
pub fn answered(w: &mut World, id: u32) {
    let now = w.now;
    let chain = w.chain.clone().expect("engine policies have a chain");
    let worker = w.item(id).worker;
    let scope = w.scope(worker);
    let item = w.items[id as usize].as_mut().expect("a live item");
    let outcome = item.answer.take().expect("an answer was due");
    let Runner::Engine(machine) = &mut item.runner else { unreachable!("an engine item") };
    let effect = machine.on_outcome(now, &outcome, &w.rows[scope], None).expect("a call was outstanding");
    let views = &mut w.rows[scope];
    let rec = record(&chain, &views[effect.provider], &effect, now);
    if let Some(writes) = &rec.writes {
        apply(views, writes);
    }
    // The primary's breaker opened (any worker's, for per-process breakers: the first).
    w.tally.opened |= effect.provider == 0 && rec.transition.is_some_and(|t| t.to == Phase::Open);
    step(w, id);
}
