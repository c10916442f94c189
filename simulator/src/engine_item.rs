//! An item driven by the engine itself: `poll` against its rows, write what it says, carry out
//! the step; on an answer, `on_outcome` then `record` into the same rows, and poll again.
use crate::world::{apply, End, Runner, World};
use resilient_engine::record::record;
use resilient_engine::step::Step;

impl World<'_> {
    pub fn step_engine(&mut self, id: u32) {
        let now = self.now;
        let worker = self.item(id).worker;
        let scope = self.scope(worker);
        let item = self.items[id as usize].as_mut().expect("a live item");
        let Runner::Engine(machine) = &mut item.runner else { unreachable!("an engine item") };
        let views = &mut self.rows[scope];
        let poll = machine.poll(now, views).expect("views match the chain");
        if let Some(w) = &poll.writes {
            apply(views, w);
        }
        match poll.step {
            Step::Call { provider, deadline_ms, probe, .. } => {
                self.tally.probes += (probe && provider == 0) as u64;
                self.send(id, provider, Some(deadline_ms));
            }
            Step::Sleep { ms, .. } => self.sleep(id, ms),
            Step::Done { fallback, .. } => self.finish(id, End::Done { by_fallback: fallback }),
            Step::Defer { retry_at_ms, .. } => self.finish(id, End::Deferred { retry_at_ms }),
            Step::Fail { .. } => self.finish(id, End::Lost),
        }
    }

    pub fn engine_answered(&mut self, id: u32) {
        let now = self.now;
        let chain = self.chain.clone().expect("engine policies have a chain");
        let worker = self.item(id).worker;
        let scope = self.scope(worker);
        let item = self.items[id as usize].as_mut().expect("a live item");
        let outcome = item.answer.take().expect("an answer was due");
        let Runner::Engine(machine) = &mut item.runner else { unreachable!("an engine item") };
        let effect = machine.on_outcome(now, &outcome, false).expect("a call was outstanding");
        let views = &mut self.rows[scope];
        if let Some(w) = record(&chain, &views[effect.provider], &effect, now).writes {
            apply(views, &w);
        }
        self.step_engine(id);
    }
}
