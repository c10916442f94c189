//! A provider's shared rows: as a poll reads them from the store in one round trip (the view), and
//! as a decision or an outcome writes them back, each with its version raised by one.
pub mod cas;
pub mod read_ahead;
pub mod row_decode;
pub mod row_text;
pub mod store_failure;
use crate::choose::latency::LatencyRow;
use crate::facts::pace_row::PaceRow;
use crate::limits::breaker::BreakerRow;
use crate::limits::in_flight::InFlightRow;
use crate::limits::key_quota::QuotaRow;
use crate::limits::learned_limit::LimitRow;
use crate::limits::rate_gate::GateRow;
use crate::limits::retry_budget::BudgetRow;
use crate::limits::spend_hold::SpendRow;
use crate::limits::token_budget::TokenRow;
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
    /// Its pace to a streamed call's first chunk (`facts::pace_row`).
    pub pace: PaceRow,
    /// The item's Fair Share Key's quota row (`key_quota`): stored under the key's name, not the
    /// provider's, and the same in every provider's view of one poll.
    pub quota: QuotaRow,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<PaceRow>,
    /// The key's quota row (written under the key's name: `RowWrite::key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<QuotaRow>,
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
            && self.pace.is_none()
            && self.quota.is_none()
    }
}
