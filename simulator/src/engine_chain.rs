//! The engine chain each policy runs on, built from the scenario's node settings: the primary
//! (and the fallback) with the shared soft rate limit and Max In Flight, except for jitter only;
//! the hedging policies are the shared store with hedging on, the routing ones the shared store
//! with another routing between the vendor and the fallback (default weights, 1:1).
use crate::policy::Policy;
use crate::scenario::Scenario;
use resilient_engine::config::{Chain, ProviderConfig, RateLimitConfig};
use std::sync::Arc;

/// `None` for the baselines without the engine.
pub fn of(policy: Policy, sc: &Scenario) -> Option<Arc<Chain>> {
    let mut cfg = sc.engine.clone();
    match policy {
        Policy::RetryOnFail | Policy::SleepLoop => return None,
        Policy::JitterOnly => {
            // A breaker that never trips: 10 000 failures within 1 ms.
            cfg.trip_rule = "consecutive".into();
            cfg.threshold = 10_000;
            cfg.window_ms = 1;
        }
        Policy::PerProcess | Policy::SharedStore => {}
        Policy::HedgeFixed | Policy::HedgeP95 => cfg.hedge = policy.hedge_mode().expect("a hedging policy").into(),
        Policy::RouteWeighted | Policy::RouteLatency => {
            cfg.routing = policy.routing().expect("a routing policy").into()
        }
    }
    let limited = policy != Policy::JitterOnly;
    let mut primary = provider("primary", limited.then(|| sc.soft_limit_of(&sc.vendor)).flatten());
    primary.max_in_flight = if limited { sc.in_flight_cap } else { None };
    let mut providers = vec![primary];
    if let Some(fb) = &sc.fallback {
        providers.push(provider("fallback", limited.then(|| sc.soft_limit_of(fb)).flatten()));
    }
    cfg.providers = providers;
    Some(Arc::new(cfg.validate().expect("the scenario's engine settings were validated on load")))
}

fn provider(name: &str, rate_limit: Option<RateLimitConfig>) -> ProviderConfig {
    ProviderConfig { name: name.into(), rate_limit, ..Default::default() }
}
