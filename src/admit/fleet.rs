//! The fleet's learned limit on calls in flight: a worker's seat calls within its share, taking
//! more of the limit (or growing it) with a write; spent, Call Chain 2.1's item waits for its
//! provider and tells the others it waits. At the call's end its share hears what the call said
//! (a cut at congestion, a share given back); without the fleet's limit, what the call taught
//! the execution's window goes to the fleet's row (`learned_limit`).
use super::limit::{Ask, Held, Limit, Refusal};
use crate::config::Chain;
use crate::item::Effect;
use crate::limits::fleet_limit::{self as rule, Take};
use crate::limits::learned_limit;
use crate::rows::{ProviderView, Writes};
use crate::verdict::reason::Reason;

pub struct FleetShare;

impl Limit for FleetShare {
    fn reserve(&self, ask: &Ask, held: &mut Held) -> Result<(), Refusal> {
        let (Some(rules), Some(taker)) = (rule::rules(ask.chain, ask.provider), ask.taker) else { return Ok(()) };
        match rule::take(&ask.view.limit, taker, ask.now, rules) {
            Take::Local => held.seat = Some(false),
            Take::Write { row, grew } => {
                held.writes.limit = Some(row);
                held.seat = Some(grew);
            }
            Take::Full { until_ms, register } => {
                return Err(Refusal::Skip {
                    reason: Reason::ConcurrencyLimit,
                    until_ms,
                    register: register.map(|limit| Writes {
                        provider: ask.provider,
                        limit: Some(limit),
                        ..Default::default()
                    }),
                    // A chain that waits in line (Call Chain 2.1) waits for its slot here rather
                    // than moving on to the next provider; a chat model's call (1.2) for a short
                    // while, then moves on.
                    wait_here: ask.local.waits_for_slot,
                });
            }
        }
        Ok(())
    }

    fn settle(&self, chain: &Chain, view: &ProviderView, effect: &Effect, now: u64, writes: &mut Writes) {
        // Where the fleet's limit bounds the provider, it alone writes the row (a cut, a share
        // given back); else what the call taught its window, when it tells the fleet something new.
        writes.limit = match (rule::rules(chain, effect.provider), &effect.seat) {
            (Some(rules), Some(seat)) => rule::release(&view.limit, seat, now, rules),
            (Some(_), None) => None,
            (None, _) => effect.window.and_then(|news| learned_limit::record(&view.limit, news, now)),
        };
    }
}
