//! The two baselines without the engine. n8n's Retry On Fail: a fixed wait between tries inside
//! the worker, any error counts, then the execution fails, or (with a fallback in the scenario)
//! its error output runs the fallback with the same Retry On Fail. Seed 000's loop: sleep(1) and
//! try the primary again, forever.
use crate::world::{End, Runner, World};
use resilient_engine::verdict::outcome::Outcome;

/// A baseline item's answer came back: done, wait and try again, the fallback, or lost.
pub fn answered(w: &mut World, id: u32, outcome: Outcome) {
    let (tries_max, wait_ms, loop_ms) = (w.sc.retry_on_fail.tries, w.sc.retry_on_fail.wait_ms, w.sc.sleep_loop_ms);
    let has_fallback = w.vendors.len() > 1;
    let item = w.item(id);
    let ok = matches!(outcome, Outcome::Status { status, .. } if status < 400);
    match &mut item.runner {
        Runner::RetryOnFail { provider, .. } if ok => {
            let by_fallback = *provider > 0;
            w.finish(id, End::Done { by_fallback });
        }
        Runner::SleepLoop if ok => w.finish(id, End::Done { by_fallback: false }),
        Runner::RetryOnFail { provider, tries } => {
            *tries += 1;
            if *tries < tries_max {
                w.sleep(id, wait_ms);
            } else if *provider == 0 && has_fallback {
                *provider = 1;
                *tries = 0;
                w.send(id, 1, None, None);
            } else {
                w.finish(id, End::Lost);
            }
        }
        Runner::SleepLoop => w.sleep(id, loop_ms),
        Runner::Engine(_) => unreachable!("a baseline item"),
    }
}
