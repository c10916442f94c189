//! Tokens per minute (total, input, output) and the spend cap: the call reserves its estimate in
//! each window and holds its estimated cost against the cap; it settles at the usage its answer
//! reported (its cost into the period's spend) and its hold is released.
use super::limit::{Ask, Held, Limit, Refusal};
use crate::config::Chain;
use crate::item::Effect;
use crate::limits::spend_hold;
use crate::limits::token_limit::{self as rule, Take};
use crate::rows::{ProviderView, Writes};

pub struct Tokens;

impl Limit for Tokens {
    fn reserve(&self, ask: &Ask, held: &mut Held) -> Result<(), Refusal> {
        let p = &ask.chain.providers[ask.provider];
        let Some(rules) = &p.tokens else { return Ok(()) };
        let holds = rule::SpendHolds { row: &ask.view.spend, lease_ms: ask.chain.call_lease_ms(ask.provider) };
        match rule::take(&ask.view.tokens, rules, ask.local.estimate, holds, ask.now) {
            Take::Granted { row, spend, reservation } => {
                held.writes.tokens = row;
                held.writes.spend = spend;
                held.tokens = Some(reservation);
                Ok(())
            }
            Take::Full { until_ms, reason } => Err(Refusal::skip(reason, until_ms)),
        }
    }

    fn settle(&self, chain: &Chain, view: &ProviderView, effect: &Effect, now: u64, writes: &mut Writes) {
        let p = &chain.providers[effect.provider];
        let (Some(rules), Some(s)) = (&p.tokens, &effect.tokens) else { return };
        writes.tokens = rule::settle(&view.tokens, rules, s, now);
        // Its cost's hold released: the cost itself is in the spend now.
        if s.reservation.held_micros > 0 {
            let until = s.reservation.at_ms.saturating_add(chain.call_lease_ms(effect.provider));
            writes.spend = spend_hold::release(&view.spend, until, s.reservation.held_micros, now);
        }
    }
}
