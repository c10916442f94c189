//! The breaker (and cooldown): an open provider is skipped until its window ends; half-open, one
//! probe across the fleet holds a lease; a drained provider (weight 0) takes only probes. Settled
//! by the call's health, which may open or close it.
use super::limit::{Ask, Held, Limit, Refusal};
use crate::config::Chain;
use crate::item::Effect;
use crate::limits::breaker::{self as rule, Admission};
use crate::rows::{ProviderView, Writes};
use crate::verdict::reason::Reason;

pub struct Breaker;

impl Limit for Breaker {
    fn reserve(&self, ask: &Ask, held: &mut Held) -> Result<(), Refusal> {
        let p = &ask.chain.providers[ask.provider];
        let admitted = rule::admit(&ask.view.breaker, &p.breaker, ask.now, ask.holder);
        held.probe = match admitted.decision {
            Admission::Skip { until_ms, reason } => return Err(Refusal::skip(reason, until_ms)),
            Admission::Probe { .. } => true,
            // Drained (weight 0): no new calls; a probe still goes, so its breaker can close.
            Admission::Call if p.weight == 0.0 => return Err(Refusal::skip(Reason::Drained, ask.now)),
            Admission::Call => false,
        };
        held.writes.breaker = admitted.row;
        held.transition = admitted.transition;
        Ok(())
    }

    /// The breaker's own settlement is [`crate::item::record`]'s first step (its transition is the
    /// write's event); nothing more here.
    fn settle(&self, _: &Chain, _: &ProviderView, _: &Effect, _: u64, _: &mut Writes) {}
}
