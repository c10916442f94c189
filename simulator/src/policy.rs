//! The policies compared side by side: two baselines without the engine, and the engine run
//! three ways (no breaker and no shared state; per-process rows; one shared set of rows).
use crate::scenario::Scenario;
use resilient_engine::config::{Chain, ProviderConfig, RateLimitConfig};
use std::sync::Arc;

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

    pub fn label(self, sc: &Scenario) -> String {
        match self {
            Policy::RetryOnFail => {
                format!("n8n Retry On Fail ({} x {} ms)", sc.retry_on_fail.tries, sc.retry_on_fail.wait_ms)
            }
            Policy::SleepLoop => format!("retry forever, sleep({} ms)", sc.sleep_loop_ms),
            Policy::JitterOnly => "full jitter, no shared state".into(),
            Policy::PerProcess => "per-process breakers".into(),
            Policy::SharedStore => "this product (shared store)".into(),
        }
    }

    /// Whether every worker shares one set of rows (the shared store).
    pub fn shared(self) -> bool {
        self == Policy::SharedStore
    }

    /// The engine chain this policy runs on; `None` for the baselines without the engine.
    pub fn chain(self, sc: &Scenario) -> Option<Arc<Chain>> {
        let mut cfg = sc.engine.clone();
        match self {
            Policy::RetryOnFail | Policy::SleepLoop => return None,
            Policy::JitterOnly => {
                // A breaker that never trips: 10 000 failures within 1 ms.
                cfg.trip_rule = "consecutive".into();
                cfg.threshold = 10_000;
                cfg.window_ms = 1;
            }
            Policy::PerProcess | Policy::SharedStore => {}
        }
        let limited = self != Policy::JitterOnly;
        let mut primary = provider("primary", limited.then(|| sc.soft_limit_of(&sc.vendor)).flatten());
        primary.max_in_flight = if limited { sc.in_flight_cap } else { None };
        let mut providers = vec![primary];
        if let Some(fb) = &sc.fallback {
            providers.push(provider("fallback", limited.then(|| sc.soft_limit_of(fb)).flatten()));
        }
        cfg.providers = providers;
        Some(Arc::new(cfg.validate().expect("the scenario's engine settings were validated on load")))
    }
}

fn provider(name: &str, rate_limit: Option<RateLimitConfig>) -> ProviderConfig {
    ProviderConfig { name: name.into(), rate_limit, ..Default::default() }
}
