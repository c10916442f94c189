//! The ideal to measure "last item finished" against: a clairvoyant client that knows the outage
//! windows and never calls into them, uses every request of each quota window (fixed windows, as
//! the vendor counts them) and is otherwise limited only by what the fleet's slots can carry
//! (slots / latency); each execution calls once, on the first healthy provider of the chain.
use crate::scenario::Scenario;

/// When the last execution would be done, in ms (infinite if no provider ever recovers).
pub fn last_done_ms(sc: &Scenario) -> f64 {
    let slots = (sc.workers as f64) * sc.concurrency as f64;
    let mut providers = vec![&sc.vendor];
    providers.extend(sc.fallback.as_ref());
    // Per provider: the quota window in use and the requests spent in it.
    let mut spent = vec![(u64::MAX, 0u32); providers.len()];
    // `t`: the earliest the next request may go; `last`: when the last one is answered.
    let (mut t, mut last) = (0.0f64, 0.0f64);
    for arrival in sc.executions.arrivals() {
        t = t.max(arrival as f64);
        loop {
            let Some(i) = providers.iter().position(|v| v.outage_at(t as u64).is_none()) else {
                match providers.iter().filter_map(|v| v.outage_at(t as u64).map(|o| o.to_ms)).min() {
                    Some(end) if end != u64::MAX => t = end as f64,
                    _ => return f64::INFINITY,
                }
                continue;
            };
            let v = providers[i];
            if let Some(q) = &v.quota {
                let window = t as u64 / q.period_ms;
                if spent[i].0 != window {
                    spent[i] = (window, 0);
                }
                if spent[i].1 >= q.requests {
                    t = ((window + 1) * q.period_ms) as f64;
                    continue;
                }
                spent[i].1 += 1;
            }
            let latency = v.mean_latency_ms();
            last = t + latency;
            t += latency.max(1.0) / slots;
            break;
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scenario(v: serde_json::Value) -> Scenario {
        Scenario::from_value(&v).expect("valid scenario")
    }

    #[test]
    fn waits_out_the_outage_then_uses_each_window() {
        // 150 executions, 50 per second after a 10 s outage: windows 10, 11, 12.
        let sc = scenario(json!({
            "workers": 10, "concurrency": 10, "executions": { "queued": 150 },
            "vendor": { "latency_ms": 100, "quota": { "requests": 50 }, "outages": [ { "from_s": 0, "to_s": 10, "status": 502 } ] }
        }));
        let done = last_done_ms(&sc);
        assert!((12_000.0..12_200.0).contains(&done), "{done}");
    }

    #[test]
    fn a_dead_primary_sends_everything_to_the_fallback() {
        let sc = scenario(json!({
            "workers": 1, "concurrency": 1, "executions": { "queued": 10 },
            "vendor": { "latency_ms": 50, "outages": [ { "status": 500 } ] },
            "fallback": { "latency_ms": 80 }
        }));
        assert_eq!(last_done_ms(&sc), 800.0, "ten calls of 80 ms one after another");
    }
}
