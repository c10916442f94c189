//! Each limit on a provider's calls, its rule and its row: the breaker and its probe, the rate
//! gate, the retry budget, the in-flight cap, the execution's window and the fleet's learned limit
//! (one congestion rule) and who waits first at it, tokens per minute and the spend cap, and a key's quotas. `crate::admit` asks them.
pub mod breaker;
pub mod concurrency;
pub mod congestion;
pub mod fair_share;
pub mod fleet_limit;
pub mod in_flight;
pub mod key_quota;
pub mod learned_limit;
pub mod lease;
pub mod pool;
pub mod priority;
pub mod rate_gate;
pub mod retry_budget;
pub mod seat;
pub mod spend_hold;
pub mod token_budget;
pub mod token_limit;
pub mod turns;
