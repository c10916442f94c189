//! Chain configuration as the node hands it over: arbitrary bytes read as the WASM engine reads
//! them (`config::decode::chain_config`) and as serde reads them (the simulator, the tests), then
//! `validate()`. Never a panic; every rejection names a field the decoder knows
//! (`decode::fields()`, indices filled in), or an unknown one it found; the two readings agree
//! wherever serde accepts; every accepted chain is within the ranges `validate` documents; the
//! config encodes and reads back to itself.
#![no_main]
use libfuzzer_sys::fuzz_target;
use resilient_engine::choose::hedge::HedgeDelay;
use resilient_engine::config::validate::MAX_HEDGES;
use resilient_engine::config::{decode, versions};
use resilient_engine::config::{Chain, ChainConfig, ProviderConfig, Routing};
use resilient_engine::limits::breaker::TripRule;
use resilient_engine::limits::token_limit::DEFAULT_OUTPUT_RESERVE;
use resilient_engine::EngineError;
use std::sync::OnceLock;

const HOUR: u64 = 3_600_000;
const DAY: u64 = 24 * HOUR;

/// The decoder's own field list: `base_ms`, `providers[].tier`, `providers[].token_limit.spend_cap`.
fn known() -> &'static [String] {
    static KNOWN: OnceLock<Vec<String>> = OnceLock::new();
    KNOWN.get_or_init(decode::fields)
}

fuzz_target!(|data: &[u8]| {
    // The WASM engine reads the text of `JSON.stringify(config)`: always UTF-8.
    let text = String::from_utf8_lossy(data);
    let by_serde = serde_json::from_str::<ChainConfig>(&text);
    if let Ok(s) = &by_serde {
        // The simulator's and the tests' reading: its rejections name known fields too.
        if let Err(e) = s.validate() {
            rejected(&e, s.providers.len());
        }
    }
    let cfg = match decode::chain_config(&text) {
        Err(e) => {
            decode_rejected(&e);
            // serde also reads a struct from a list, by position (`[]` is the defaults); the
            // decoder only from an object. Otherwise what it refuses, serde refuses too.
            let a_list = e.to_string().ends_with("must be an object");
            assert!(a_list || by_serde.is_err(), "serde reads what the decoder refuses ({e}): {text}");
            return;
        }
        Ok(cfg) => cfg,
    };
    if let Ok(s) = by_serde {
        // Both readings agree, once serde's config reads the panel's zeros as unset.
        assert_same(&cfg, &panel_zeros_unset(s), "decoder vs serde");
    }
    let result = cfg.validate();
    assert_eq!(cfg.validate(), result, "validate is deterministic");

    // Stable: the config encodes, the decoder reads it back to itself, it validates the same.
    if finite(&cfg) {
        let json = serde_json::to_string(&cfg).expect("a decoded config encodes");
        let again = decode::chain_config(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
        assert_same(&again, &cfg, "JSON round trip");
        // The same chain or the same rejection, floats to within their last bits: the engine's
        // reader (`resilient_engine::json`) keeps a decimal's first 15-16 significant digits
        // (`0.922337203685077580725`), an ulp or two away from the shortest form serde writes.
        let chain = |r: &Result<Chain, EngineError>| match r {
            Ok(c) => serde_json::to_value(c).expect("a chain encodes"),
            Err(e) => serde_json::Value::String(e.to_string()),
        };
        let (x, y) = (chain(&again.validate()), chain(&result));
        assert!(same(&x, &y), "the config read back validates the same: {x} vs {y}");
    }

    match result {
        Err(e) => rejected(&e, cfg.providers.len()),
        Ok(chain) => within_ranges(&cfg, &chain),
    }
});

/// A field as the decoder lists it: `providers[3].token_limit.x` is `providers[].token_limit.x`,
/// with the index.
fn generic(field: &str) -> (String, Option<usize>) {
    if let Some(rest) = field.strip_prefix("providers[") {
        if let Some((i, tail)) = rest.split_once(']') {
            if let Ok(i) = i.parse::<usize>() {
                return (format!("providers[]{tail}"), Some(i));
            }
        }
    }
    (field.to_string(), None)
}

fn is_known(field: &str) -> bool {
    known().iter().any(|k| k == field)
}

/// A rejection of `validate`: an invalid_config naming a known field (of a provider that exists).
fn rejected(e: &EngineError, providers: usize) {
    assert_eq!(e.code(), "invalid_config", "{e}");
    let field = e.field().expect("a config error names its field");
    let (path, index) = generic(field);
    assert!(is_known(&path), "unknown field {field:?} in {e}");
    assert!(index.is_none_or(|i| i < providers), "{field:?} of {providers} providers: {e}");
    assert!(e.to_string().contains(field), "{e}");
}

/// A rejection of the decoder: not JSON (`config`), the configuration not an object (no field:
/// the decoder's top level has no name), an unknown field under a known object, or a known field
/// of the wrong type.
fn decode_rejected(e: &EngineError) {
    assert_eq!(e.code(), "invalid_config", "{e}");
    let field = e.field().expect("a config error names its field");
    assert!(e.to_string().contains(field), "{e}");
    if field == "config" || (field.is_empty() && e.to_string().ends_with("must be an object")) {
        return;
    }
    if e.to_string().ends_with("unknown field") {
        // The unknown key is the input's, dots and brackets and all: the field is some known
        // object's path (indices filled in), a dot, then a key that object does not have.
        let splits = std::iter::once(0).chain(field.match_indices('.').map(|(at, _)| at + 1));
        let found = splits.into_iter().any(|at| {
            let parent = generic(field[..at].strip_suffix('.').unwrap_or_default()).0;
            let key = &field[at..];
            let dotted = if parent.is_empty() { key.to_string() } else { format!("{parent}.{key}") };
            let plain = !key.contains(['.', '[']);
            (parent.is_empty() || is_object(&parent)) && !(plain && is_known(&dotted))
        });
        assert!(found, "{field:?} is not an unknown field of a known object: {e}");
        return;
    }
    // A known field of the wrong type, or a provider that is not an object (`providers[1]`).
    let (path, _) = generic(field);
    assert!(is_known(&path) || is_object(&path), "unknown field {field:?} in {e}");
}

/// `path` holds known fields: `providers[]`, `providers[].rate_limit`.
fn is_object(path: &str) -> bool {
    known().iter().any(|k| k.starts_with(&format!("{path}.")))
}

/// serde's reading as the decoder's: an override of 0 is the node's value, a rate limit of 0
/// requests none, a tier of 0 the default (a weight of 0 is a weight).
fn panel_zeros_unset(mut c: ChainConfig) -> ChainConfig {
    for p in &mut c.providers {
        for v in [
            &mut p.max_attempts,
            &mut p.deadline_ms,
            &mut p.threshold,
            &mut p.open_ms,
            &mut p.max_in_flight,
            &mut p.tier,
        ] {
            if *v == Some(0) {
                *v = None;
            }
        }
        if p.rate_limit.as_ref().is_some_and(|r| r.requests == 0) {
            p.rate_limit = None;
        }
    }
    c
}

/// No float is infinite (serde would write it as null, which reads back as absent).
fn finite(c: &ChainConfig) -> bool {
    let token_limits = c.providers.iter().filter_map(|p| p.token_limit.as_ref());
    [c.failure_rate, c.open_growth, c.type_version].iter().chain(c.providers.iter().filter_map(|p| p.weight.as_ref())).all(|f| f.is_finite())
        // Every number of a token limit, whatever fields it grows: a non-finite one encodes as null.
        && token_limits.into_iter().all(|t| {
            let v = serde_json::to_value(t).expect("a token limit encodes");
            v.as_object().into_iter().flatten().all(|(_, v)| !v.is_null())
        })
}

/// Equal, floats to within their last bits (two JSON readers may round a decimal apart).
fn assert_same(a: &ChainConfig, b: &ChainConfig, what: &str) {
    let (va, vb) = (serde_json::to_value(a).expect("encodes"), serde_json::to_value(b).expect("encodes"));
    assert!(same(&va, &vb), "{what}: {va} vs {vb}");
}

fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value::{Array, Number, Object};
    match (a, b) {
        (Number(x), Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
            x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (Array(x), Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Object(x), Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w))),
        _ => a == b,
    }
}

/// What `ChainConfig::validate` documents of an accepted chain, field by field.
fn within_ranges(cfg: &ChainConfig, chain: &Chain) {
    assert_eq!(chain.providers.len(), cfg.providers.len());
    assert!(!chain.providers.is_empty());
    let b = chain.backoff;
    assert!(b.base_ms >= 1 && b.base_ms <= HOUR && b.base_ms <= b.cap_ms && b.cap_ms <= DAY, "{b:?}");
    assert!(chain.budget_ms >= 1 && chain.budget_ms <= 7 * DAY);
    assert!(chain.retry_after_cap_ms <= DAY && chain.defer_spread_ms <= DAY);
    assert_eq!(Routing::parse(&cfg.routing), Some(chain.routing), "routing {:?}", cfg.routing);

    // Flags pass through as given.
    let r = &chain.rules;
    assert_eq!(
        (r.count_429, r.retry_unsafe_methods, r.count_answer_misses),
        (cfg.count_429, cfg.retry_unsafe_methods, cfg.count_answer_misses)
    );
    assert_eq!((r.answer_checks.empty, r.answer_checks.finish), (cfg.check_empty, cfg.check_finish));
    // A switch left unset is the node version's (`config::versions`); without a node, off.
    let d = versions::of(&cfg.node, cfg.type_version).expect("a chain that validated names a known node");
    assert_eq!(
        [
            chain.next_provider_when_input_too_long,
            chain.next_provider_on_client_error,
            chain.fail_over_first,
            chain.wait_in_line,
            chain.fleet_limit,
            chain.continue_broken_streams,
        ],
        [
            cfg.next_provider_when_input_too_long.unwrap_or(d.next_provider_when_input_too_long),
            cfg.next_provider_on_client_error,
            cfg.fail_over_first,
            cfg.wait_in_line.unwrap_or(d.wait_in_line),
            cfg.fleet_limit.unwrap_or(d.fleet_limit),
            cfg.continue_broken_streams.unwrap_or(d.continue_broken_streams),
        ]
    );
    for s in [100u16, 200, 408, 429, 500, 599, 600, 0, u16::MAX] {
        let _ = r.retry_statuses.contains(s);
        let _ = r.health_statuses.contains(s);
    }

    // Retry budget: 0 per cent is off; otherwise 1..=1000 %, a floor of 0..=1e6 a second, a
    // window of 1 s to an hour.
    match chain.retry_budget {
        None => assert_eq!(cfg.retry_budget_percent, 0),
        Some(rb) => {
            assert_eq!(i64::from(rb.percent), cfg.retry_budget_percent);
            assert!((1..=1_000).contains(&rb.percent), "{rb:?}");
            assert!(rb.floor_per_s <= 1_000_000, "{rb:?}");
            assert!((1_000..=HOUR).contains(&rb.window_ms), "{rb:?}");
        }
    }

    // Hedging: off, a fixed delay of 1 ms to an hour, or a p95 within 1 ms <= min <= max <= an
    // hour; 1..=MAX_HEDGES hedges.
    match chain.hedge {
        None => assert_eq!(cfg.hedge, "off"),
        Some(h) => {
            assert!(h.max_hedges >= 1 && i64::from(h.max_hedges) <= MAX_HEDGES, "{h:?}");
            match h.delay {
                HedgeDelay::Fixed { ms } => {
                    assert_eq!(cfg.hedge, "fixed");
                    assert!((1..=HOUR).contains(&ms), "{h:?}");
                }
                HedgeDelay::P95 { min_ms, max_ms } => {
                    assert_eq!(cfg.hedge, "p95");
                    assert!(min_ms >= 1 && min_ms <= max_ms && max_ms <= HOUR, "{h:?}");
                }
            }
        }
    }

    // Streams: the first chunk is due before every attempt's deadline.
    match chain.stream {
        None => assert!(!cfg.streams),
        Some(s) => {
            assert!(cfg.streams);
            assert!(s.first_chunk_ms >= 1 && s.first_chunk_ms <= DAY && s.idle_ms >= 1 && s.idle_ms <= DAY);
            assert!(chain.providers.iter().all(|p| s.first_chunk_ms < p.deadline_ms), "{s:?}");
        }
    }

    for (i, p) in chain.providers.iter().enumerate() {
        let given: &ProviderConfig = &cfg.providers[i];
        assert!(!p.name.is_empty() && p.name == p.name.trim() && p.name.len() <= 200, "{:?}", p.name);
        assert_eq!(p.name, given.name.trim());
        assert!(chain.providers[..i].iter().all(|q| q.name != p.name), "duplicate {:?}", p.name);
        assert!((1..=100).contains(&p.max_attempts));
        assert!(p.deadline_ms >= 1 && p.deadline_ms <= DAY);
        let br = &p.breaker;
        assert!((1..=10_000).contains(&br.threshold), "{br:?}");
        assert!(br.window_ms >= 1 && br.window_ms <= DAY, "{br:?}");
        assert!(br.open_ms >= 1 && br.open_ms <= DAY && br.open_ms <= br.open_max_ms, "{br:?}");
        assert!(br.open_max_ms <= 7 * DAY, "{br:?}");
        assert!(br.half_open_probes <= 1_000 && (1..=1_000).contains(&br.successes_to_close), "{br:?}");
        assert!(br.open_growth >= 1.0 && br.open_growth <= 100.0);
        assert!(br.probe_lease_ms > p.deadline_ms, "a probe lease outlives its call");
        assert_eq!(br.probe_answer_ms, p.deadline_ms);
        if let TripRule::FailureRate { rate, min_calls } = br.trip {
            assert!(rate > 0.0 && rate <= 1.0 && (1..=100_000).contains(&min_calls));
        }
        // The open window stays within its bounds for any streak: with a probe interval, at most
        // three intervals (the first trip: the shorter of it and the open window).
        let every = br.probe_interval_ms;
        assert!(every == 0 || (1_000..=DAY).contains(&every), "{br:?}");
        for streak in [0, 1, 2, 10, 63, 64, 1000, u32::MAX] {
            let w = br.open_window(streak);
            let (low, high) = match every {
                0 => (br.open_ms.min(br.open_max_ms), br.open_max_ms.max(br.open_ms)),
                _ => (br.open_ms.min(every), 3 * every),
            };
            assert!(w >= low && w <= high, "{w} at streak {streak}: {br:?}");
        }
        if let Some(r) = p.rate_limit {
            assert!((1..=1_000_000).contains(&r.requests) && (1..=1_000_000).contains(&r.burst), "{r:?}");
            assert!(r.period_ms >= 1 && r.period_ms <= DAY, "{r:?}");
        }
        assert_eq!(p.rate_limit.is_some(), given.rate_limit.is_some());
        assert!(p.max_in_flight.is_none_or(|c| (1..=100_000).contains(&c)));
        // Tier 1..=100 (1 when unset); weight 0..=1e6 (1 when unset).
        assert!((1..=100).contains(&p.tier), "tier {}", p.tier);
        assert_eq!(i64::from(p.tier), given.tier.unwrap_or(1));
        assert!((0.0..=1_000_000.0).contains(&p.weight), "weight {}", p.weight);
        assert_eq!(p.weight, given.weight.unwrap_or(1.0));
        // A call says it is idempotent, or its method does: then it is safe to repeat.
        let method = given.method.to_ascii_uppercase();
        assert_eq!(p.unsafe_method, !given.idempotent && (method == "POST" || method == "PATCH"));
        assert_eq!(p.repairs, given.repairs);
        tokens_within_ranges(p, given);
        // Leases outlive the calls they cover.
        assert!(chain.call_life_ms(i) >= p.deadline_ms);
        assert!(chain.call_lease_ms(i) > chain.call_life_ms(i));
        assert!(chain.lease_cap(i).is_none_or(|c| c >= 1));
    }
    serde_json::to_string(chain).expect("a chain encodes");
}

/// Token limits: each per-minute limit 0 (none) or 1..=1e9; an output reserve of 1..=1e7 (0: the
/// default); every price 0..=1e9; a spend cap only with a price of input or output tokens; none of
/// it at all when it limits and prices nothing.
fn tokens_within_ranges(p: &resilient_engine::config::Provider, given: &ProviderConfig) {
    let Some(t) = &given.token_limit else {
        assert!(p.tokens.is_none());
        return;
    };
    let priced = t.price_input > 0.0 || t.price_output > 0.0;
    let per_minute = [t.tokens_per_minute, t.input_tokens_per_minute, t.output_tokens_per_minute];
    let Some(rules) = &p.tokens else {
        assert!(!priced && per_minute == [0, 0, 0] && t.spend_cap == 0.0, "{t:?}");
        return;
    };
    let l = &rules.limits;
    for (limit, given) in [l.per_minute, l.input_per_minute, l.output_per_minute].into_iter().zip(per_minute) {
        match limit {
            None => assert_eq!(given, 0),
            Some(n) => assert!((1..=1_000_000_000).contains(&n) && n as i64 == given, "{l:?}"),
        }
    }
    assert!(l.limits_minute() || priced, "{t:?}");
    let reserve = if t.output_reserve == 0 { DEFAULT_OUTPUT_RESERVE } else { t.output_reserve as u64 };
    assert_eq!(rules.output_reserve, reserve);
    assert!((1..=10_000_000).contains(&rules.output_reserve));
    // Every price, whatever kinds it grows: finite, 0..=1e9.
    let prices = serde_json::to_value(rules.prices).expect("prices encode");
    for (kind, v) in prices.as_object().into_iter().flatten() {
        let v = v.as_f64().unwrap_or_else(|| panic!("price {kind} is not a number: {prices}"));
        assert!((0.0..=1e9).contains(&v), "price {kind}: {v}");
    }
    assert_eq!((rules.prices.input, rules.prices.output), (t.price_input, t.price_output));
    match l.spend_cap_micros {
        None => assert_eq!(t.spend_cap, 0.0),
        Some(micros) => {
            assert!(priced && t.spend_cap > 0.0 && t.spend_cap <= 1e9, "{t:?}");
            assert!(micros <= 1_000_000_000_000_000, "{micros}");
        }
    }
    assert_eq!(l.period, t.spend_period);
}
