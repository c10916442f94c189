//! Applying an outcome's effect to a provider's shared rows: breaker, gate, in-flight slot, and
//! the call's duration in its latency row (latency routing).
//! Pure, so a store can re-run it on fresh rows after losing a compare-and-set race.
use crate::breaker::{self, Transition};
use crate::chain::{ProviderView, Writes};
use crate::config::Chain;
use crate::fleet_limit;
use crate::in_flight;
use crate::latency;
use crate::learned_limit;
use crate::outcome::Health;
use crate::rate_gate;
use crate::retry_budget::SAMPLE_EVERY;
use crate::spend_hold;
use crate::step::Effect;
use crate::token_limit;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    /// `None` when nothing changed: write nothing.
    pub writes: Option<Writes>,
    pub transition: Option<Transition>,
    /// These rows reach the provider's spend cap for its period (`token_limit`): the trigger's
    /// event, once, with the write that crosses it.
    pub spend_cap: Option<SpendCapReached>,
}

/// A provider's spend cap reached by a call's cost: what was spent, the cap, the period's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpendCapReached {
    pub spent_micros: u64,
    pub cap_micros: u64,
    pub period_ends_ms: u64,
    pub at_ms: u64,
}

pub fn record(chain: &Chain, view: &ProviderView, effect: &Effect, now: u64) -> Recorded {
    let p = &chain.providers[effect.provider];
    let b = breaker::record(&view.breaker, &p.breaker, now, effect.health, &effect.holder, &effect.label);
    let writes = Writes {
        provider: effect.provider,
        breaker: b.row,
        gate: effect.gate_close_until_ms.and_then(|until| rate_gate::close(&view.gate, until)),
        in_flight: if effect.release_in_flight { in_flight::release(&view.in_flight, &effect.holder) } else { None },
        latency: effect.latency_ms.map(|ms| match effect.first_chunk {
            true => latency::record_first_chunk(&view.latency, ms, now),
            false => latency::record(&view.latency, ms, now),
        }),
        // The call counts toward its provider's retry budget while it is in trouble: sampled,
        // one call in eight deposits eight (by the call's own number: no randomness drawn).
        budget: chain
            .retry_budget
            .filter(|b| {
                effect.sample.is_multiple_of(SAMPLE_EVERY as u64)
                    && b.counting(&view.budget, now, effect.health == Health::Failure)
            })
            .map(|b| b.deposit(&view.budget, now)),
        // Where the fleet's limit bounds the provider, it alone writes the row (a cut, a share
        // given back); else what the call taught its window, when it tells the fleet something new.
        limit: match (crate::fleet_limit::rules(chain, effect.provider), &effect.seat) {
            (Some(rules), Some(seat)) => fleet_limit::release(&view.limit, seat, now, rules),
            (Some(_), None) => None,
            (None, _) => effect.window.and_then(|news| learned_limit::record(&view.limit, news, now)),
        },
        // The call's reservation settled at what it used; its cost added to the period's spend.
        tokens: match (&p.tokens, &effect.tokens) {
            (Some(rules), Some(settle)) => token_limit::settle(&view.tokens, rules, settle, now),
            _ => None,
        },
        // Its cost's hold against the spend cap released: the cost itself is in the spend now.
        spend: effect.tokens.filter(|s| s.reservation.held_micros > 0).and_then(|s| {
            let until = s.reservation.at_ms.saturating_add(p.breaker.probe_lease_ms);
            spend_hold::release(&view.spend, until, s.reservation.held_micros, now)
        }),
    };
    let spend_cap = match (&p.tokens, &writes.tokens) {
        (Some(crate::token_limit::TokenRules { limits: l, .. }), Some(row)) => l.spend_cap_micros.and_then(|cap| {
            let (before, after) = (l.spent(&view.tokens, now), l.spent(row, now));
            (before < cap && after >= cap).then(|| SpendCapReached {
                spent_micros: after,
                cap_micros: cap,
                period_ends_ms: l.period(now).1,
                at_ms: now,
            })
        }),
        _ => None,
    };
    Recorded { writes: (!writes.is_empty()).then_some(writes), transition: b.transition, spend_cap }
}
