//! Chain configuration as the node hands it over: arbitrary bytes decoded as JSON into
//! `ChainConfig`, then `validate()`. Never a panic; every rejection names a real field; every
//! accepted chain is within the documented ranges; encode/decode/validate is stable.
#![no_main]
use libfuzzer_sys::fuzz_target;
use resilient_engine::limits::breaker::TripRule;
use resilient_engine::config::ChainConfig;

const DAY: u64 = 86_400_000;
const TOP_FIELDS: &[&str] = &[
    "providers",
    "strategy",
    "base_ms",
    "cap_ms",
    "max_attempts",
    "deadline_ms",
    "budget_ms",
    "retry_after_cap_ms",
    "defer_spread_ms",
    "retry_statuses",
    "health_statuses",
    "trip_rule",
    "failure_rate",
    "min_calls",
    "threshold",
    "window_ms",
    "open_ms",
    "open_growth",
    "open_max_ms",
    "half_open_probes",
    "successes_to_close",
];
const PROVIDER_FIELDS: &[&str] = &[
    "name",
    "method",
    "max_attempts",
    "deadline_ms",
    "threshold",
    "open_ms",
    "rate_limit.requests",
    "rate_limit.period_ms",
    "rate_limit.burst",
    "max_in_flight",
];

fuzz_target!(|data: &[u8]| {
    let Ok(cfg) = serde_json::from_slice::<ChainConfig>(data) else { return };
    let result = cfg.validate();

    // Stable: the config encodes, decodes to itself and validates the same way again.
    let json = serde_json::to_vec(&cfg).expect("a decoded config encodes");
    let again: ChainConfig = serde_json::from_slice(&json).expect("an encoded config decodes");
    assert_eq!(again, cfg, "JSON round trip");
    assert_eq!(again.validate(), result, "validate is deterministic");

    let chain = match result {
        Err(e) => {
            assert_eq!(e.code(), "invalid_config", "{e}");
            let field = e.field().expect("a config error names its field");
            assert!(!field.is_empty(), "{e}");
            assert!(known_field(field, cfg.providers.len()), "unknown field {field:?} in {e}");
            assert!(e.to_string().contains(field), "{e}");
            return;
        }
        Ok(chain) => chain,
    };

    assert_eq!(chain.providers.len(), cfg.providers.len());
    assert!(!chain.providers.is_empty());
    let b = chain.backoff;
    assert!(b.base_ms >= 1 && b.base_ms <= b.cap_ms && b.cap_ms <= DAY, "{b:?}");
    assert!(chain.budget_ms >= 1 && chain.budget_ms <= 7 * DAY);
    assert!(chain.retry_after_cap_ms <= DAY && chain.defer_spread_ms <= DAY);
    for (i, p) in chain.providers.iter().enumerate() {
        assert!(!p.name.is_empty() && p.name == p.name.trim() && p.name.len() <= 200, "{:?}", p.name);
        assert!(chain.providers[..i].iter().all(|q| q.name != p.name), "duplicate {:?}", p.name);
        assert!((1..=100).contains(&p.max_attempts));
        assert!(p.deadline_ms >= 1 && p.deadline_ms <= DAY);
        let br = &p.breaker;
        assert!(br.threshold >= 1 && br.window_ms >= 1 && br.open_ms >= 1 && br.successes_to_close >= 1);
        assert!(br.open_ms <= br.open_max_ms, "{br:?}");
        assert!(br.open_growth >= 1.0 && br.open_growth <= 100.0);
        assert!(br.probe_lease_ms > p.deadline_ms, "a probe lease outlives its call");
        if let TripRule::FailureRate { rate, min_calls } = br.trip {
            assert!(rate > 0.0 && rate <= 1.0 && min_calls >= 1);
        }
        // The open window stays within its bounds for any streak.
        for streak in [0, 1, 2, 10, 63, 64, 1000, u32::MAX] {
            let w = br.open_window(streak);
            assert!(
                w >= br.open_ms.min(br.open_max_ms) && w <= br.open_max_ms.max(br.open_ms),
                "{w} at streak {streak}: {br:?}"
            );
        }
        if let Some(r) = p.rate_limit {
            assert!(r.requests >= 1 && r.period_ms >= 1 && r.burst >= 1);
        }
        assert!(p.max_in_flight.is_none_or(|c| c >= 1));
        let method = cfg.providers[i].method.to_ascii_uppercase();
        assert_eq!(p.unsafe_method, method == "POST" || method == "PATCH");
    }
    for s in [100u16, 200, 408, 429, 500, 599, 600, 0, u16::MAX] {
        let _ = chain.rules.retry_statuses.contains(s);
    }
});

fn known_field(field: &str, providers: usize) -> bool {
    if field == "config" || TOP_FIELDS.contains(&field) {
        return true;
    }
    let Some(rest) = field.strip_prefix("providers[") else { return false };
    let Some((i, name)) = rest.split_once("].") else { return false };
    i.parse::<usize>().is_ok_and(|i| i < providers) && PROVIDER_FIELDS.contains(&name)
}
