//! The execution's window (Item Concurrency *Auto*, in memory, one per execution and chain): a
//! call takes a slot of its provider's window, or waits in the window's line, or, where the window
//! spent its calls before a first success with none out, skips the provider as its breaker or
//! rate gate would. Asked last, so it never keeps a slot for a call a shared limit turned away;
//! the breaker's half-open probe passes it (it is the fleet's one call). The slot is given back
//! by the item machine at the call's end, with what the call said (the window learns from it).
use super::limit::{Ask, Held, Limit, Refusal};
use crate::config::Chain;
use crate::item::Effect;
use crate::limits::breaker;
use crate::limits::concurrency::Admit;
use crate::rows::{ProviderView, Writes};
use crate::verdict::reason::Reason;

pub struct ExecutionWindow;

impl Limit for ExecutionWindow {
    fn reserve(&self, ask: &Ask, held: &mut Held) -> Result<(), Refusal> {
        let Some(place) = ask.pool.filter(|_| !held.probe) else { return Ok(()) };
        let mut pool = place.pool.borrow_mut();
        // Where the fleet's limit let it go and it waits for a slot there, it goes in its turn
        // among the execution's items waiting at that limit (a retry first), not whoever looks
        // first once a slot frees (`Pool::fleet_turn`).
        let (provider, retry) = (ask.provider, ask.local.retry);
        if held.seat.is_some()
            && ask.local.waits_for_slot
            && !pool.fleet_turn(provider, place.member, retry, ask.now, true)
        {
            let until_ms = ask.now + crate::limits::fleet_limit::RECHECK_MS;
            return Err(Refusal::Skip { reason: Reason::ConcurrencyLimit, until_ms, register: None, wait_here: true });
        }
        match pool.admit(provider, place.member, retry) {
            Admit::Go { round } => held.window_round = Some(round),
            Admit::Wait => return Err(Refusal::Queue),
            Admit::Refuse => {
                // Spent on failures: the breaker opened on them (as Item Concurrency 1 says);
                // spent on 429s alone: its rate gate closed.
                let p = &ask.chain.providers[ask.provider];
                let (reason, until_ms) = if pool.refused_for_failures(ask.provider) {
                    breaker::spent_skip(&ask.view.breaker, &p.breaker, ask.now)
                } else {
                    let until = ask.view.gate.closed_until_ms.max(ask.now.saturating_add(ask.chain.backoff.cap_ms));
                    (Reason::RateLimited, until)
                };
                return Err(Refusal::skip(reason, until_ms));
            }
        }
        Ok(())
    }

    /// Its settlement is in memory (the item machine gives the slot back with the call's signal);
    /// what it taught the window reaches the fleet's row through the fleet's limit.
    fn settle(&self, _: &Chain, _: &ProviderView, _: &Effect, _: u64, _: &mut Writes) {}
}
