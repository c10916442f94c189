//! Fallback-chain choice: given the ordered chain, each provider's shared state and what this
//! item already learned, which provider to call now, which to skip and why, or how long until
//! one is admissible again.
use crate::breaker::{self, Admission, BreakerRow, Transition};
use crate::config::Chain;
use crate::fleet_limit::{self, Taker};
use crate::in_flight::{self, Acquire, InFlightRow};
use crate::latency::LatencyRow;
use crate::learned_limit::LimitRow;
use crate::rate_gate::{self, GateRow, Take};
use crate::reason::Reason;
use crate::retry_budget::{BudgetRow, Spend};
use crate::spend_hold::SpendRow;
use crate::token_budget::{Estimate, TokenRow};
use crate::token_limit::{self, Reservation};
use serde::{Deserialize, Serialize};

/// A provider's shared state as read from the store in one round trip. Missing rows are fresh.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ProviderView {
    pub breaker: BreakerRow,
    pub gate: GateRow,
    pub in_flight: InFlightRow,
    pub latency: LatencyRow,
    pub budget: BudgetRow,
    /// The window the fleet learned (Item Concurrency Auto).
    pub limit: LimitRow,
    /// Tokens of the last minute and spend of the period (`token_limit`).
    pub tokens: TokenRow,
    /// The cost held by calls out against its spend cap (`spend_hold`).
    pub spend: SpendRow,
}

/// New rows to write back atomically (each with `version` = stored version + 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Writes {
    pub provider: usize,
    pub breaker: Option<BreakerRow>,
    pub gate: Option<GateRow>,
    pub in_flight: Option<InFlightRow>,
    pub latency: Option<LatencyRow>,
    pub budget: Option<BudgetRow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<LimitRow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenRow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend: Option<SpendRow>,
}

impl Writes {
    pub fn is_empty(&self) -> bool {
        self.breaker.is_none()
            && self.gate.is_none()
            && self.in_flight.is_none()
            && self.latency.is_none()
            && self.budget.is_none()
            && self.limit.is_none()
            && self.tokens.is_none()
            && self.spend.is_none()
    }
}

/// What this item alone knows about a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Local {
    /// Done with it for this item: the reason, and from when trying again could help.
    pub done: Option<(Reason, u64)>,
    /// A gate slot this item reserved and is sleeping towards.
    pub reserved_at_ms: Option<u64>,
    /// A call to it now would be a retry (this item already made a call): it spends from the
    /// provider's retry budget.
    pub retry: bool,
    /// What a call to it would reserve of its tokens per minute (`token_limit`).
    pub estimate: Estimate,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    Call {
        provider: usize,
        probe: bool,
        writes: Writes,
        transition: Option<Transition>,
        /// The call holds a slot of the fleet's limit (`Some`); `Some(true)`: taking it grew the
        /// limit.
        seat: Option<bool>,
        /// The tokens it reserved (where the provider has token limits), settled at its end.
        tokens: Option<Reservation>,
    },
    /// A gate slot reserved at `at_ms` on this provider: sleep, then call it.
    Reserve { provider: usize, at_ms: u64, writes: Writes },
    /// Nothing admissible; `earliest` = when and why the soonest provider could be tried again.
    Nothing {
        earliest: Option<(u64, Reason)>,
        all_permanent: bool,
        /// Where the fleet's limit is spent: the row telling the others this worker waits.
        register: Option<Writes>,
    },
}

/// A provider passed over, why, and until when. `until_ms` leaves the engine only for a reason
/// that waits for something (a retryable one): a refusal or a failed check ends nothing later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Skip {
    pub provider: usize,
    pub reason: Reason,
    #[serde(default)]
    pub until_ms: u64,
}

impl Serialize for Skip {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let waits = self.reason.is_retryable();
        let mut out = s.serialize_struct("Skip", 2 + usize::from(waits))?;
        out.serialize_field("provider", &self.provider)?;
        out.serialize_field("reason", &self.reason)?;
        if waits {
            out.serialize_field("until_ms", &self.until_ms)?;
        }
        out.end()
    }
}

/// The first admissible provider in `order` (the item's route: every provider once).
/// `takers[i]`: who takes a slot of provider i's fleet limit (where the chain bounds it).
#[allow(clippy::too_many_arguments)]
pub fn choose(
    chain: &Chain,
    order: &[usize],
    views: &[ProviderView],
    local: &[Local],
    takers: &[Taker],
    now: u64,
    holder: &str,
    max_wait_ms: u64,
    skips: &mut Vec<Skip>,
) -> Choice {
    let mut register = None;
    let mut earliest: Option<(u64, Reason)> = None;
    let mut all_permanent = true;
    let mut note = |skip: Skip, earliest: &mut Option<(u64, Reason)>, skips: &mut Vec<Skip>| {
        if skip.reason.is_retryable() {
            all_permanent = false;
            if earliest.is_none_or(|(t, _)| skip.until_ms < t) {
                *earliest = Some((skip.until_ms, skip.reason));
            }
        }
        match skips.iter_mut().find(|s| s.provider == skip.provider) {
            Some(s) => *s = skip,
            None => skips.push(skip),
        }
    };
    for &i in order {
        let p = &chain.providers[i];
        if let Some((reason, until_ms)) = local[i].done {
            note(Skip { provider: i, reason, until_ms }, &mut earliest, skips);
            continue;
        }
        let view = &views[i];
        let admitted = breaker::admit(&view.breaker, &p.breaker, now, holder);
        let probe = match admitted.decision {
            Admission::Skip { until_ms, reason } => {
                note(Skip { provider: i, reason, until_ms }, &mut earliest, skips);
                continue;
            }
            Admission::Probe { .. } => true,
            // Drained (weight 0): no new calls; a probe still goes, so its breaker can close.
            Admission::Call if p.weight == 0.0 => {
                note(Skip { provider: i, reason: Reason::Drained, until_ms: now }, &mut earliest, skips);
                continue;
            }
            Admission::Call => false,
        };
        let mut writes = Writes { provider: i, breaker: admitted.row, ..Default::default() };
        // A retry spends from the provider's budget, shared by the fleet; first calls never do.
        if let (true, Some(budget)) = (local[i].retry, &chain.retry_budget) {
            match budget.spend(&view.budget, now) {
                Spend::Granted(row) => writes.budget = Some(row),
                Spend::Spent { until_ms } => {
                    note(Skip { provider: i, reason: Reason::RetryBudget, until_ms }, &mut earliest, skips);
                    continue;
                }
            }
        }
        // A reserved slot is this item's, but a closure set since (a 429 or a long hint seen by
        // any worker) still holds it back: then `take` below answers with the closure.
        let reserved = local[i].reserved_at_ms.is_some_and(|at| at <= now) && now >= view.gate.closed_until_ms;
        if !reserved {
            match rate_gate::take(&view.gate, p.rate_limit.as_ref(), now, max_wait_ms) {
                Take::Now { row } => writes.gate = row,
                // Reserve only when the breaker lets us through without a claim to hold.
                Take::Reserved { at_ms, row } if writes.breaker.is_none() => {
                    return Choice::Reserve {
                        provider: i,
                        at_ms,
                        writes: Writes { provider: i, gate: Some(row), ..Default::default() },
                    };
                }
                Take::Reserved { at_ms, .. } => {
                    note(Skip { provider: i, reason: Reason::RateLimited, until_ms: at_ms }, &mut earliest, skips);
                    continue;
                }
                Take::Wait { until_ms, reason } => {
                    note(Skip { provider: i, reason, until_ms }, &mut earliest, skips);
                    continue;
                }
            }
        }
        let mut tokens = None;
        if let Some(rules) = &p.tokens {
            let held = token_limit::Held { row: &view.spend, lease_ms: p.breaker.probe_lease_ms };
            match token_limit::take(&view.tokens, rules, local[i].estimate, held, now) {
                token_limit::Take::Granted { row, spend, reservation } => {
                    writes.tokens = row;
                    writes.spend = spend;
                    tokens = Some(reservation);
                }
                token_limit::Take::Full { until_ms, reason } => {
                    note(Skip { provider: i, reason, until_ms }, &mut earliest, skips);
                    continue;
                }
            }
        }
        if let Some(cap) = chain.lease_cap(i) {
            match in_flight::acquire(&view.in_flight, cap, holder, now, p.breaker.probe_lease_ms) {
                Acquire::Granted { row } => writes.in_flight = Some(row),
                Acquire::Full { until_ms, reason } => {
                    note(Skip { provider: i, reason, until_ms }, &mut earliest, skips);
                    continue;
                }
            }
        }
        let mut seat = None;
        if let (Some(rules), Some(taker)) = (crate::fleet_limit::rules(chain, i), takers.get(i)) {
            match fleet_limit::take(&view.limit, taker, now, rules) {
                fleet_limit::Take::Local => seat = Some(false),
                fleet_limit::Take::Write { row, grew } => {
                    writes.limit = Some(row);
                    seat = Some(grew);
                }
                fleet_limit::Take::Full { until_ms, register: row } => {
                    note(Skip { provider: i, reason: Reason::ConcurrencyLimit, until_ms }, &mut earliest, skips);
                    if register.is_none() {
                        register = row.map(|limit| Writes { provider: i, limit: Some(limit), ..Default::default() });
                    }
                    // A chain that waits in line (Call Chain 2.1) waits for its slot here rather
                    // than moving on to the next provider; a chat model's call moves on.
                    if chain.wait_in_line {
                        return Choice::Nothing {
                            earliest: Some((until_ms, Reason::ConcurrencyLimit)),
                            all_permanent: false,
                            register,
                        };
                    }
                    continue;
                }
            }
        }
        return Choice::Call { provider: i, probe, writes, transition: admitted.transition, seat, tokens };
    }
    Choice::Nothing { earliest, all_permanent, register }
}
