//! An item driven by the engine itself: `poll` against its rows, write what it says, carry out
//! the step; on an answer, `on_outcome` then `record` into the same rows, and poll again.
//! A hedging chain's item follows the engine's protocol and decides nothing itself: a call whose
//! step says `hedge_after_ms` sets a timer; when it comes due with no answer, `hedge` says
//! whether to send another call (or when to ask again); once an answer ends the item, the calls
//! still out are aborted, each handed back with `abandon`, and their late answers ignored.
use crate::world::{apply, End, Runner, World};
use resilient_engine::choose::chain::ProviderView;
use resilient_engine::item::record::record;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{Effect, ItemMachine, Poll, Step};
use resilient_engine::limits::breaker::Phase;
use resilient_engine::verdict::outcome::Outcome;

/// The item's machine, the rows it reads and writes (its worker's, or the shared set) and their index.
fn parts<'a>(w: &'a mut World, id: u32) -> (&'a mut ItemMachine, &'a mut [ProviderView], usize) {
    let worker = w.items[id as usize].as_ref().expect("a live item").worker;
    let scope = w.scope(worker);
    let item = w.items[id as usize].as_mut().expect("a live item");
    let Runner::Engine(machine) = &mut item.runner else { unreachable!("an engine item") };
    (machine, &mut w.rows[scope], scope)
}

/// Poll the item's step machine against its rows and carry out the step.
pub fn step(w: &mut World, id: u32) {
    let now = w.now;
    let (machine, views, scope) = parts(w, id);
    let poll = machine.poll(now, views).expect("views match the chain");
    carry_out(w, id, scope, poll);
}

/// The item's hedge timer came due: ask the engine for a hedge and carry out its answer.
pub fn hedge_due(w: &mut World, id: u32) {
    let now = w.now;
    let (machine, views, scope) = parts(w, id);
    let poll = machine.hedge(now, views, false).expect("a hedging item with a call out");
    carry_out(w, id, scope, poll);
}

/// Write a poll's rows and carry out its step: a call (and its hedge timer), a sleep, an await
/// (a later hedge timer, or none), or the item's end.
fn carry_out(w: &mut World, id: u32, scope: usize, poll: Poll) {
    if let Some(writes) = &poll.writes {
        apply(&mut w.rows[scope], writes);
    }
    match poll.step {
        Step::Call { provider, deadline_ms, probe, hedging, .. } => {
            if probe && provider == 0 {
                w.tally.probe(w.now);
            }
            w.tally.hedges += hedging.is_some_and(|t| t.hedge) as u64;
            w.send(id, provider, Some(deadline_ms), hedging.map(|t| t.call));
            match hedging.and_then(|t| t.hedge_after_ms) {
                Some(ms) => w.hedge_timer(id, ms),
                None => w.no_hedge_timer(id),
            }
        }
        Step::Await { hedge_after_ms: Some(ms) } => w.hedge_timer(id, ms),
        Step::Await { hedge_after_ms: None } => w.no_hedge_timer(id),
        Step::Sleep { ms, .. } => w.sleep(id, ms),
        // The simulator's items join no pool (Item Concurrency Auto is per execution): no line.
        Step::Queue { .. } => unreachable!("an item in no pool is never queued"),
        Step::Done { fallback, .. } => w.finish(id, End::Done { by_fallback: fallback }),
        Step::Defer { retry_at_ms, .. } => w.finish(id, End::Deferred { retry_at_ms }),
        Step::Fail { .. } => w.finish(id, End::Lost),
    }
}

/// `record` an effect into the rows; whether it opened the provider's breaker.
fn commit(w: &mut World, scope: usize, effect: &Effect) -> bool {
    let chain = w.chain.clone().expect("engine policies have a chain");
    let views = &mut w.rows[scope];
    let rec = record(&chain, &views[effect.provider], effect, w.now);
    if let Some(writes) = &rec.writes {
        apply(views, writes);
    }
    rec.transition.is_some_and(|t| t.to == Phase::Open)
}

/// An answer to the item's call `call` (the engine's number; `None` on a chain that does not
/// hedge) came back: `on_outcome`, `record` into the rows; then, if that ended the item, abort
/// the calls still out (`abandon`, `record`) and end it; if other calls are out, wait for them;
/// else poll again (which sleeps until the machine's wake-up if that is still ahead).
pub fn answered(w: &mut World, id: u32, call: Option<u32>, outcome: Outcome) {
    let now = w.now;
    let (machine, views, scope) = parts(w, id);
    let effect = machine.on_outcome(now, &outcome, views, call, CallEnd::default()).expect("a call was outstanding");
    let opened = commit(w, scope, &effect);
    // The primary's breaker opened (any worker's, for per-process breakers: the first).
    w.tally.opened |= effect.provider == 0 && opened;
    let (machine, _, _) = parts(w, id);
    let (ended, out) = (machine.finished().is_some(), machine.calls_out());
    if ended {
        for c in out {
            let (machine, _, _) = parts(w, id);
            let effect = machine.abandon(now, c).expect("a call out");
            w.abort(id, c);
            w.tally.abandoned += 1;
            let opened = commit(w, scope, &effect);
            w.tally.opened |= effect.provider == 0 && opened;
        }
        step(w, id); // the machine's end, as a step: the item leaves its slot
    } else if out.is_empty() {
        w.no_hedge_timer(id);
        step(w, id);
    }
    // Else another call of the item is still out: its answer (or the hedge timer) comes next.
}
