//! The policies compared side by side: two baselines without the engine, and the engine run
//! three ways (no breaker and no shared state; per-process rows; one shared set of rows), plus
//! this product with hedged requests (a fixed delay, or the provider's p95), and this product
//! routing between the vendor and the fallback (weighted, or by latency) instead of in order.
//! Names only: a scenario lists them, so this module depends on nothing else of the simulator
//! (their labels are in `report`, their engine chains in `engine_chain`).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// n8n's Retry On Fail: fixed wait, N tries per item inside one worker, then the execution
    /// fails (or runs the fallback through the error output when the scenario has one).
    RetryOnFail,
    /// Seed 000's loop: retry forever after a fixed sleep(1), no jitter, primary only.
    SleepLoop,
    /// The engine with full jitter but a breaker that never trips and no rate limit, rows per worker.
    JitterOnly,
    /// The engine at its defaults, every worker with its own copy of the rows (opossum, cockatiel).
    PerProcess,
    /// This product: the engine at its defaults, one shared set of rows, soft rate limit.
    SharedStore,
    /// This product hedging after a fixed delay (the scenario's `engine.hedge_delay_ms`).
    HedgeFixed,
    /// This product hedging after the provider's p95 (`engine.hedge_min_ms` .. `hedge_max_ms`).
    HedgeP95,
    /// This product routing by weight between the vendor and the fallback (default weights: 1:1).
    RouteWeighted,
    /// This product routing by latency: the fastest recent median first (within 20 %, at random).
    RouteLatency,
}

/// The policies a scenario without `"policies"` compares (the hedging and routing ones are asked
/// for by name).
pub const ALL: [Policy; 5] =
    [Policy::RetryOnFail, Policy::SleepLoop, Policy::JitterOnly, Policy::PerProcess, Policy::SharedStore];

/// Every policy a scenario may name.
pub const NAMED: [Policy; 9] = [
    Policy::RetryOnFail,
    Policy::SleepLoop,
    Policy::JitterOnly,
    Policy::PerProcess,
    Policy::SharedStore,
    Policy::HedgeFixed,
    Policy::HedgeP95,
    Policy::RouteWeighted,
    Policy::RouteLatency,
];

impl Policy {
    pub fn key(self) -> &'static str {
        match self {
            Policy::RetryOnFail => "retry_on_fail",
            Policy::SleepLoop => "sleep_loop",
            Policy::JitterOnly => "jitter_only",
            Policy::PerProcess => "per_process_breakers",
            Policy::SharedStore => "shared_store",
            Policy::HedgeFixed => "hedge_fixed",
            Policy::HedgeP95 => "hedge_p95",
            Policy::RouteWeighted => "route_weighted",
            Policy::RouteLatency => "route_latency",
        }
    }

    pub fn parse(s: &str) -> Option<Policy> {
        NAMED.into_iter().find(|p| p.key() == s)
    }

    /// Whether every worker shares one set of rows (the shared store).
    pub fn shared(self) -> bool {
        matches!(
            self,
            Policy::SharedStore | Policy::HedgeFixed | Policy::HedgeP95 | Policy::RouteWeighted | Policy::RouteLatency
        )
    }

    /// The engine's `hedge` setting this policy runs with; `None`: the scenario's own.
    pub fn hedge_mode(self) -> Option<&'static str> {
        match self {
            Policy::HedgeFixed => Some("fixed"),
            Policy::HedgeP95 => Some("p95"),
            _ => None,
        }
    }

    /// The engine's `routing` this policy runs with; `None`: the scenario's own (default `order`).
    pub fn routing(self) -> Option<&'static str> {
        match self {
            Policy::RouteWeighted => Some("weighted"),
            Policy::RouteLatency => Some("latency"),
            _ => None,
        }
    }
}
