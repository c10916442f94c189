//! The shared rate gate (GCRA): a call takes a slot now, or reserves a later one and sleeps
//! towards it; a 429 or a hint past the cap closes the gate for every worker.
use super::limit::{Ask, Held, Limit, Refusal};
use crate::config::Chain;
use crate::item::Effect;
use crate::limits::rate_gate::{self as rule, Take};
use crate::rows::{ProviderView, Writes};
use crate::verdict::reason::Reason;

pub struct RateGate;

impl Limit for RateGate {
    fn reserve(&self, ask: &Ask, held: &mut Held) -> Result<(), Refusal> {
        let (p, view, now) = (&ask.chain.providers[ask.provider], ask.view, ask.now);
        // A reserved slot is this item's, but a closure set since (a 429 or a long hint seen by
        // any worker) still holds it back: then `take` answers with the closure. Woken too late
        // for it, the item takes a slot anew.
        let on_time = |at| at <= now && rule::on_time(p.rate_limit.as_ref(), at, now);
        if ask.local.reserved_at_ms.is_some_and(on_time) && now >= view.gate.closed_until_ms {
            return Ok(());
        }
        match rule::take(&view.gate, p.rate_limit.as_ref(), now, ask.max_wait_ms) {
            Take::Now { row } => {
                held.writes.gate = row;
                Ok(())
            }
            // Reserve only when the breaker lets us through without a claim to hold.
            Take::Reserved { at_ms, row } if held.writes.breaker.is_none() => Err(Refusal::Later {
                at_ms,
                writes: Writes { provider: ask.provider, gate: Some(row), ..Default::default() },
            }),
            Take::Reserved { at_ms, .. } => Err(Refusal::skip(Reason::RateLimited, at_ms)),
            Take::Wait { until_ms, reason } => Err(Refusal::skip(reason, until_ms)),
        }
    }

    fn settle(&self, _: &Chain, view: &ProviderView, effect: &Effect, _: u64, writes: &mut Writes) {
        writes.gate = effect.gate_close_until_ms.and_then(|until| rule::close(&view.gate, until));
    }
}
