//! The retry budget, shared by the fleet: a retry (any call after the item's first) spends from
//! it, first calls never do; calls deposit into it, sampled, while the provider is in trouble.
use super::limit::{Ask, Held, Limit, Refusal};
use crate::config::Chain;
use crate::item::Effect;
use crate::limits::retry_budget::{Spend, SAMPLE_EVERY};
use crate::rows::{ProviderView, Writes};
use crate::verdict::outcome::Health;
use crate::verdict::reason::Reason;

pub struct RetryBudget;

impl Limit for RetryBudget {
    fn reserve(&self, ask: &Ask, held: &mut Held) -> Result<(), Refusal> {
        let (true, Some(budget)) = (ask.local.retry, &ask.chain.retry_budget) else { return Ok(()) };
        match budget.spend(&ask.view.budget, ask.now) {
            Spend::Granted(row) => {
                held.writes.budget = Some(row);
                Ok(())
            }
            Spend::Spent { until_ms } => Err(Refusal::skip(Reason::RetryBudget, until_ms)),
        }
    }

    /// One call in eight deposits eight (by the call's own number: no randomness drawn).
    fn settle(&self, chain: &Chain, view: &ProviderView, effect: &Effect, now: u64, writes: &mut Writes) {
        writes.budget = chain
            .retry_budget
            .filter(|b| {
                effect.sample.is_multiple_of(SAMPLE_EVERY as u64)
                    && b.counting(&view.budget, now, effect.health == Health::Failure)
            })
            .map(|b| b.deposit(&view.budget, now));
    }
}
