//! The two baselines without the engine. n8n's Retry On Fail: a fixed wait between tries inside
//! the worker, any error counts, then the execution fails, or (with a fallback in the scenario)
//! its error output runs the fallback with the same Retry On Fail. Seed 000's loop: sleep(1) and
//! try the primary again, forever.
use crate::world::{End, Runner, World};
use resilient_engine::outcome::Outcome;

impl World<'_> {
    pub fn baseline_answered(&mut self, id: u32) {
        let (tries_max, wait_ms, loop_ms) =
            (self.sc.retry_on_fail.tries, self.sc.retry_on_fail.wait_ms, self.sc.sleep_loop_ms);
        let has_fallback = self.vendors.len() > 1;
        let item = self.item(id);
        let ok = matches!(item.answer.take(), Some(Outcome::Status { status, .. }) if status < 400);
        match &mut item.runner {
            Runner::RetryOnFail { provider, .. } if ok => {
                let by_fallback = *provider > 0;
                self.finish(id, End::Done { by_fallback });
            }
            Runner::SleepLoop if ok => self.finish(id, End::Done { by_fallback: false }),
            Runner::RetryOnFail { provider, tries } => {
                *tries += 1;
                if *tries < tries_max {
                    self.sleep(id, wait_ms);
                } else if *provider == 0 && has_fallback {
                    *provider = 1;
                    *tries = 0;
                    self.send(id, 1, None);
                } else {
                    self.finish(id, End::Lost);
                }
            }
            Runner::SleepLoop => self.sleep(id, loop_ms),
            Runner::Engine(_) => unreachable!("a baseline item"),
        }
    }
}
