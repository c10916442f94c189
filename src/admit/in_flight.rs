//! Max In Flight across the fleet (and Least Busy routing's count): the call holds a lease while
//! it is out, released at its end (a lease its worker never released lapses).
use super::limit::{Ask, Held, Limit, Refusal};
use crate::config::Chain;
use crate::item::Effect;
use crate::limits::in_flight::{self as rule, Acquire};
use crate::rows::{ProviderView, Writes};

pub struct InFlight;

impl Limit for InFlight {
    fn reserve(&self, ask: &Ask, held: &mut Held) -> Result<(), Refusal> {
        let Some(cap) = ask.chain.lease_cap(ask.provider) else { return Ok(()) };
        let lease_ms = ask.chain.call_lease_ms(ask.provider);
        match rule::acquire(&ask.view.in_flight, cap, ask.holder, ask.now, lease_ms) {
            Acquire::Granted { row } => {
                held.writes.in_flight = Some(row);
                Ok(())
            }
            Acquire::Full { until_ms, reason } => Err(Refusal::skip(reason, until_ms)),
        }
    }

    fn settle(&self, _: &Chain, view: &ProviderView, effect: &Effect, _: u64, writes: &mut Writes) {
        if effect.release_in_flight {
            writes.in_flight = rule::release(&view.in_flight, &effect.holder);
        }
    }
}
