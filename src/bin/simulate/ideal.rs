//! The ideal to measure "last item finished" against: a clairvoyant client that knows the outage
//! windows, never calls into them, and sends at the most the vendor or the fleet can take (the
//! quota, or slots / latency) whenever a provider is healthy, each execution once.
use crate::scenario::Scenario;
use crate::vendor::VendorSpec;

/// When the last execution would finish, in ms.
pub fn last_done_ms(sc: &Scenario) -> f64 {
    let slots = (sc.workers as f64) * sc.concurrency as f64;
    let mut providers = vec![&sc.vendor];
    providers.extend(sc.fallback.as_ref());
    // `t`: the earliest the next request may go; `last`: when the last one finishes.
    let (mut t, mut last) = (0.0f64, 0.0f64);
    for arrival in sc.executions.arrivals() {
        t = t.max(arrival as f64);
        // The first provider healthy at t, else wait for the earliest outage end.
        loop {
            match providers.iter().find(|v| v.outage_at(t as u64).is_none()) {
                Some(v) => {
                    last = t + v.latency_ms as f64 + v.latency_jitter_ms as f64 / 2.0;
                    t += 1.0 / rate_per_ms(v, slots);
                    break;
                }
                None => match providers.iter().filter_map(|v| v.outage_at(t as u64).map(|o| o.to_ms)).min() {
                    Some(end) if end != u64::MAX => t = end as f64,
                    _ => return f64::INFINITY,
                },
            }
        }
    }
    last
}

/// Requests per ms a provider can take: its quota, or what the fleet's slots can carry.
fn rate_per_ms(v: &VendorSpec, slots: f64) -> f64 {
    let carried = slots / (v.latency_ms as f64 + v.latency_jitter_ms as f64 / 2.0).max(1.0);
    match &v.quota {
        Some(q) => carried.min(q.requests as f64 / q.period_ms as f64),
        None => carried,
    }
}
