//! What an item, a check or a report adds to each provider's counters: one rule for every entry
//! point (Call Chain, the chat model, Check Provider, Report Outcome).
use super::types::AttemptLog;
use crate::outcome::Health;
use serde::{Deserialize, Serialize};

/// Seeds 002 and 003's metrics for one provider, as this item contributed to them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Counters {
    pub calls: u32,
    pub failures: u32,
    /// Skipped without a call because its breaker was open or its probes taken.
    pub rejections: u32,
    pub retries: u32,
    pub rate_limited_429: u32,
    /// Items the chain gave up on (deferred or failed), counted on the chain's first provider.
    pub give_ups: u32,
    /// Of those, the items handed back on the deferred output (first provider, as `give_ups`).
    pub deferrals: u32,
    /// Retries not made because the provider's retry budget was spent.
    pub retry_budget_exhausted: u32,
    /// Hedges sent to the provider, and those whose answer served the item.
    pub hedges: u32,
    pub hedge_wins: u32,
}

impl Counters {
    /// One attempt's share: a call, and whether it failed, retried or met a 429. The same rule
    /// for every entry point (Call Chain, the chat model, Report Outcome).
    pub fn count(&mut self, a: &AttemptLog) {
        self.calls += 1;
        self.failures += (a.health == Health::Failure) as u32;
        self.retries += (a.attempt > 1) as u32;
        self.rate_limited_429 += (a.outcome == "429") as u32;
        self.hedges += a.hedge as u32;
        // The hedge's answer won: the item was served by it.
        self.hedge_wins += (a.hedge && a.health == Health::Success) as u32;
    }
}
