//! Applying an outcome's effect to a provider's shared rows: the breaker (its transition is the
//! write's event), the call's duration in its latency row (latency routing), and every limit's
//! settlement ([`crate::admit`]). Pure, so a store can re-run it on fresh rows after losing a
//! compare-and-set race.
use crate::admit;
use crate::choose::chain::{ProviderView, Writes};
use crate::choose::latency;
use crate::config::Chain;
use crate::facts::pace_row;
use crate::item::Effect;
use crate::limits::breaker::{self, Transition};
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
    let mut writes = Writes {
        provider: effect.provider,
        breaker: b.row,
        latency: effect.latency_ms.map(|ms| match effect.first_chunk {
            true => latency::record_first_chunk(&view.latency, ms, now),
            false => latency::record(&view.latency, ms, now),
        }),
        pace: pace_row::learn(&view.pace, effect.pace, effect.pace_gap, now),
        ..Writes::default()
    };
    // Every limit settles the call: what it used, what it held released.
    admit::settle(chain, view, effect, now, &mut writes);
    let spend_cap = match (&p.tokens, &writes.tokens) {
        (Some(crate::limits::token_limit::TokenRules { limits: l, .. }), Some(row)) => {
            l.spend_cap_micros.and_then(|cap| {
                let (before, after) = (l.spent(&view.tokens, now), l.spent(row, now));
                (before < cap && after >= cap).then(|| SpendCapReached {
                    spent_micros: after,
                    cap_micros: cap,
                    period_ends_ms: l.period(now).1,
                    at_ms: now,
                })
            })
        }
        _ => None,
    };
    Recorded { writes: (!writes.is_empty()).then_some(writes), transition: b.transition, spend_cap }
}
