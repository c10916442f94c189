//! The routing a chain names (`ChainConfig::routing`); `crate::choose::routing` does it.
use serde::{Deserialize, Serialize};

/// Which admissible provider of the best tier an item tries first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Routing {
    Order,
    Weighted,
    LeastBusy,
    Latency,
}

impl Routing {
    pub const NAMES: &'static str = "order, weighted, least_busy, latency";
    pub const ALL: [Routing; 4] = [Routing::Order, Routing::Weighted, Routing::LeastBusy, Routing::Latency];

    pub fn parse(s: &str) -> Option<Routing> {
        crate::error::one_of("routing", "routing", s, Routing::NAMES).ok().map(|i| Routing::ALL[i])
    }

    /// Every call holds an in-flight lease, so the fleet's count of calls in flight is known.
    pub fn leases_every_call(self) -> bool {
        self == Routing::LeastBusy
    }

    /// Answered calls' durations are recorded in the providers' latency rows.
    pub fn tracks_latency(self) -> bool {
        self == Routing::Latency
    }
}
