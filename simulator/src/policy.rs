//! The policies compared side by side: two baselines without the engine, and the engine run
//! three ways (no breaker and no shared state; per-process rows; one shared set of rows).
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
}

pub const ALL: [Policy; 5] =
    [Policy::RetryOnFail, Policy::SleepLoop, Policy::JitterOnly, Policy::PerProcess, Policy::SharedStore];

impl Policy {
    pub fn key(self) -> &'static str {
        match self {
            Policy::RetryOnFail => "retry_on_fail",
            Policy::SleepLoop => "sleep_loop",
            Policy::JitterOnly => "jitter_only",
            Policy::PerProcess => "per_process_breakers",
            Policy::SharedStore => "shared_store",
        }
    }

    pub fn parse(s: &str) -> Option<Policy> {
        ALL.into_iter().find(|p| p.key() == s)
    }

    /// Whether every worker shares one set of rows (the shared store).
    pub fn shared(self) -> bool {
        self == Policy::SharedStore
    }
}
