//! The item's key's quotas (`key_quota`): a call counts one request and holds its estimate's
//! tokens and cost in the key's row while out; its end settles them at what it used. The row is
//! the key's, in every provider's view: a quota spent skips every provider until its period ends.
use super::limit::{Ask, Held, Limit, Refusal};
use crate::config::Chain;
use crate::item::Effect;
use crate::limits::key_quota::{self as rule, Size};
use crate::rows::{ProviderView, Writes};
use crate::verdict::reason::Reason;

pub struct KeyQuota;

impl Limit for KeyQuota {
    fn reserve(&self, ask: &Ask, held: &mut Held) -> Result<(), Refusal> {
        let Some(quotas) = &ask.chain.quotas else { return Ok(()) };
        // Tokens (asked before) reserved the call's estimate, at the provider's prices.
        let size = match (&held.tokens, &ask.chain.providers[ask.provider].tokens) {
            (Some(r), Some(rules)) => Size {
                tokens: r.estimate.0 + r.estimate.1,
                micros: rules.cost_micros(&crate::limits::token_limit::Usage {
                    input: r.estimate.0,
                    output: r.estimate.1,
                    ..Default::default()
                }),
            },
            _ => Size::default(),
        };
        let until = ask.now.saturating_add(ask.chain.call_lease_ms(ask.provider));
        match rule::take(&ask.view.quota, &quotas.list, size, until, ask.now) {
            Ok(taken) => {
                held.writes.quota = Some(taken.row);
                if let Some(r) = &mut held.tokens {
                    r.quota = taken.hold;
                }
                Ok(())
            }
            Err(until_ms) => Err(Refusal::skip(Reason::KeyQuota, until_ms)),
        }
    }

    fn settle(&self, chain: &Chain, view: &ProviderView, effect: &Effect, now: u64, writes: &mut Writes) {
        let (Some(quotas), Some(s)) = (&chain.quotas, &effect.tokens) else { return };
        let used = Size { tokens: s.used.input + s.used.output, micros: s.used.cost_micros };
        writes.quota = rule::settle(&view.quota, &quotas.list, s.reservation.quota, used, now);
    }
}
