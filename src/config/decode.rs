//! Reading a chain's configuration from its JSON text field by field, as serde's derive would
//! (`default`, `deny_unknown_fields`), so the WASM engine needs no serde deserializer at all.
//! A value of the wrong type or an unknown field is `invalid_config` naming the field; ranges are
//! `ChainConfig::validate`'s. tests check that both readings agree.
use crate::config::{ChainConfig, ProviderConfig, RateLimitConfig, TokenLimitConfig};
use crate::error::EngineError;
use crate::json::{self, Number, Object, Value};
use crate::limits::token_limit::Period;

type Result<T> = std::result::Result<T, EngineError>;

struct Fields<'a> {
    at: String,
    obj: &'a Object,
}

impl<'a> Fields<'a> {
    fn of(at: String, v: &'a Value, known: &[&str]) -> Result<Self> {
        let Value::Object(obj) = v else { return Err(EngineError::config(at, "must be an object")) };
        if let Some(k) = obj.keys().find(|k| !known.contains(&k.as_str())) {
            let field = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
            return Err(EngineError::config(field, "unknown field"));
        }
        Ok(Fields { at, obj })
    }

    fn field(&self, name: &str) -> String {
        if self.at.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.at)
        }
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.obj.get(name).filter(|v| !matches!(v, Value::Null))
    }

    fn int(&self, name: &str, into: &mut i64) -> Result<()> {
        if let Some(v) = self.get(name) {
            *into = int(v).ok_or_else(|| EngineError::config(self.field(name), "must be a whole number"))?;
        }
        Ok(())
    }

    fn opt_int(&self, name: &str) -> Result<Option<i64>> {
        let mut v = 0;
        Ok(match self.get(name) {
            None => None,
            Some(_) => {
                self.int(name, &mut v)?;
                Some(v)
            }
        })
    }

    fn float(&self, name: &str, into: &mut f64) -> Result<()> {
        if let Some(v) = self.get(name) {
            *into = match v {
                Value::Number(Number::F64(f)) => *f,
                Value::Number(Number::U64(n)) => *n as f64,
                Value::Number(Number::I64(n)) => *n as f64,
                _ => return Err(EngineError::config(self.field(name), "must be a number")),
            };
        }
        Ok(())
    }

    fn text(&self, name: &str, into: &mut String) -> Result<()> {
        match self.get(name) {
            None => Ok(()),
            Some(Value::String(s)) => {
                into.clone_from(s);
                Ok(())
            }
            Some(_) => Err(EngineError::config(self.field(name), "must be a string")),
        }
    }

    fn flag(&self, name: &str, into: &mut bool) -> Result<()> {
        match self.get(name) {
            None => Ok(()),
            Some(Value::Bool(b)) => {
                *into = *b;
                Ok(())
            }
            Some(_) => Err(EngineError::config(self.field(name), "must be true or false")),
        }
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(Number::U64(n)) => i64::try_from(*n).ok(),
        Value::Number(Number::I64(n)) => Some(*n),
        _ => None,
    }
}

// The fields the decoder knows, at each level: anything else is an unknown field. Public for the
// config fuzz target and its coverage test (`tests/config_fuzz_coverage.rs`), which read them
// through `fields()`.
pub const CHAIN: &[&str] = &[
    "providers",
    "routing",
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
    "count_429",
    "retry_unsafe_methods",
    "count_answer_misses",
    "check_empty",
    "check_finish",
    "next_provider_when_input_too_long",
    "next_provider_on_client_error",
    "streams",
    "first_chunk_deadline_ms",
    "stream_idle_ms",
    "fail_over_first",
    "wait_in_line",
    "wait_for_slot",
    "priority",
    "fair_share_key",
    "fair_share_weight",
    "key_quotas",
    "fleet_limit",
    "continue_broken_streams",
    "learn_stream_pace",
    "retry_budget_percent",
    "retry_budget_floor_per_s",
    "retry_budget_window_ms",
    "hedge",
    "hedge_delay_ms",
    "hedge_min_ms",
    "hedge_max_ms",
    "max_hedges",
    "trip_rule",
    "failure_rate",
    "min_calls",
    "threshold",
    "window_ms",
    "open_ms",
    "open_growth",
    "open_max_ms",
    "probe_interval_ms",
    "half_open_probes",
    "successes_to_close",
    "node",
    "type_version",
    "workflow_id",
];
pub const PROVIDER: &[&str] = &[
    "name",
    "method",
    "idempotent",
    "repairs",
    "max_attempts",
    "deadline_ms",
    "threshold",
    "open_ms",
    "rate_limit",
    "max_in_flight",
    "tier",
    "weight",
    "token_limit",
];
pub const KEY_QUOTA: &[&str] = &["measure", "per", "limit"];
pub const RATE_LIMIT: &[&str] = &["requests", "period_ms", "burst"];
pub const TOKEN_LIMIT: &[&str] = &[
    "tokens_per_minute",
    "input_tokens_per_minute",
    "output_tokens_per_minute",
    "output_reserve",
    "spend_cap",
    "spend_period",
    "price_input",
    "price_output",
    "price_cached_input",
    "price_cache_write",
    "price_reasoning",
];

/// Every field the decoder knows, as dotted paths: `base_ms`, `providers`, `providers[].name`,
/// `providers[].rate_limit`, `providers[].rate_limit.burst`, `providers[].token_limit.spend_cap`.
/// A rejection's field is one of them with its index filled in (`providers[2].tier`).
pub fn fields() -> Vec<String> {
    let mut all = Vec::new();
    for &c in CHAIN {
        all.push(c.to_string());
        if c == "key_quotas" {
            all.extend(KEY_QUOTA.iter().map(|n| format!("key_quotas[].{n}")));
        }
        if c != "providers" {
            continue;
        }
        for &p in PROVIDER {
            all.push(format!("providers[].{p}"));
            let nested: &[&str] = match p {
                "rate_limit" => RATE_LIMIT,
                "token_limit" => TOKEN_LIMIT,
                _ => &[],
            };
            all.extend(nested.iter().map(|n| format!("providers[].{p}.{n}")));
        }
    }
    all
}

fn provider(i: usize, v: &Value) -> Result<ProviderConfig> {
    let f = Fields::of(format!("providers[{i}]"), v, PROVIDER)?;
    let mut p = ProviderConfig::default();
    f.text("name", &mut p.name)?;
    f.text("method", &mut p.method)?;
    f.flag("idempotent", &mut p.idempotent)?;
    f.flag("repairs", &mut p.repairs)?;
    for (name, slot) in [
        ("max_attempts", &mut p.max_attempts),
        ("deadline_ms", &mut p.deadline_ms),
        ("threshold", &mut p.threshold),
        ("open_ms", &mut p.open_ms),
        ("max_in_flight", &mut p.max_in_flight),
    ] {
        // 0 is the panel's "node default": the same as absent.
        *slot = f.opt_int(name)?.filter(|&v| v != 0);
    }
    // A tier of 0 reads as the default too; a weight of 0 is a weight (it drains).
    p.tier = f.opt_int("tier")?.filter(|&v| v != 0);
    if f.get("weight").is_some() {
        let mut w = 0.0;
        f.float("weight", &mut w)?;
        p.weight = Some(w);
    }
    if let Some(r) = f.get("rate_limit") {
        let r = Fields::of(f.field("rate_limit"), r, RATE_LIMIT)?;
        let mut limit = RateLimitConfig::default();
        r.int("requests", &mut limit.requests)?;
        r.int("period_ms", &mut limit.period_ms)?;
        r.int("burst", &mut limit.burst)?;
        // 0 requests (or none given) is the panel's "no rate limit", as 0 is "node default" above.
        p.rate_limit = (limit.requests != 0).then_some(limit);
    }
    if let Some(t) = f.get("token_limit") {
        let t = Fields::of(f.field("token_limit"), t, TOKEN_LIMIT)?;
        let mut limit = TokenLimitConfig::default();
        t.int("tokens_per_minute", &mut limit.tokens_per_minute)?;
        t.int("input_tokens_per_minute", &mut limit.input_tokens_per_minute)?;
        t.int("output_tokens_per_minute", &mut limit.output_tokens_per_minute)?;
        t.int("output_reserve", &mut limit.output_reserve)?;
        t.float("spend_cap", &mut limit.spend_cap)?;
        for (name, slot) in [
            ("price_input", &mut limit.price_input),
            ("price_output", &mut limit.price_output),
            ("price_cached_input", &mut limit.price_cached_input),
            ("price_reasoning", &mut limit.price_reasoning),
            ("price_cache_write", &mut limit.price_cache_write),
        ] {
            t.float(name, slot)?;
        }
        let mut period = String::new();
        t.text("spend_period", &mut period)?;
        limit.spend_period = match period.as_str() {
            "" | "day" => Period::Day,
            "month" => Period::Month,
            other => {
                return Err(EngineError::config(
                    t.field("spend_period"),
                    format!("must be day or month, got '{other}'"),
                ))
            }
        };
        p.token_limit = Some(limit);
    }
    Ok(p)
}

/// The configuration in `text` (JSON), every absent field at its default.
pub fn chain_config(text: &str) -> Result<ChainConfig> {
    let v: Value = json::from_str(text).map_err(|_| EngineError::config("config", "not JSON"))?;
    let f = Fields::of(String::new(), &v, CHAIN)?;
    let mut c = ChainConfig::default();
    if let Some(list) = f.get("providers") {
        let Value::Array(list) = list else { return Err(EngineError::config("providers", "must be a list")) };
        for (i, p) in list.iter().enumerate() {
            c.providers.push(provider(i, p)?);
        }
    }
    // Loops over tables rather than a call per field: the WASM engine is smaller for it.
    for (name, slot) in [
        ("routing", &mut c.routing),
        ("strategy", &mut c.strategy),
        ("retry_statuses", &mut c.retry_statuses),
        ("health_statuses", &mut c.health_statuses),
        ("trip_rule", &mut c.trip_rule),
        ("hedge", &mut c.hedge),
        ("fair_share_key", &mut c.fair_share_key),
        ("node", &mut c.node),
        ("workflow_id", &mut c.workflow_id),
    ] {
        f.text(name, slot)?;
    }
    for (name, slot) in [
        ("base_ms", &mut c.base_ms),
        ("cap_ms", &mut c.cap_ms),
        ("max_attempts", &mut c.max_attempts),
        ("deadline_ms", &mut c.deadline_ms),
        ("budget_ms", &mut c.budget_ms),
        ("retry_after_cap_ms", &mut c.retry_after_cap_ms),
        ("defer_spread_ms", &mut c.defer_spread_ms),
        ("min_calls", &mut c.min_calls),
        ("threshold", &mut c.threshold),
        ("window_ms", &mut c.window_ms),
        ("open_ms", &mut c.open_ms),
        ("open_max_ms", &mut c.open_max_ms),
        ("half_open_probes", &mut c.half_open_probes),
        ("successes_to_close", &mut c.successes_to_close),
        ("first_chunk_deadline_ms", &mut c.first_chunk_deadline_ms),
        ("stream_idle_ms", &mut c.stream_idle_ms),
        ("retry_budget_percent", &mut c.retry_budget_percent),
        ("retry_budget_floor_per_s", &mut c.retry_budget_floor_per_s),
        ("retry_budget_window_ms", &mut c.retry_budget_window_ms),
        ("hedge_delay_ms", &mut c.hedge_delay_ms),
        ("hedge_min_ms", &mut c.hedge_min_ms),
        ("hedge_max_ms", &mut c.hedge_max_ms),
        ("max_hedges", &mut c.max_hedges),
        ("fair_share_weight", &mut c.fair_share_weight),
    ] {
        f.int(name, slot)?;
    }
    for (name, slot) in [
        ("count_429", &mut c.count_429),
        ("retry_unsafe_methods", &mut c.retry_unsafe_methods),
        ("count_answer_misses", &mut c.count_answer_misses),
        ("check_empty", &mut c.check_empty),
        ("check_finish", &mut c.check_finish),
        ("next_provider_on_client_error", &mut c.next_provider_on_client_error),
        ("streams", &mut c.streams),
        ("fail_over_first", &mut c.fail_over_first),
    ] {
        f.flag(name, slot)?;
    }
    // The switches a node version sets where its user set nothing (`ChainConfig::node`).
    for (name, slot) in [
        ("next_provider_when_input_too_long", &mut c.next_provider_when_input_too_long),
        ("wait_in_line", &mut c.wait_in_line),
        ("wait_for_slot", &mut c.wait_for_slot),
        ("fleet_limit", &mut c.fleet_limit),
        ("continue_broken_streams", &mut c.continue_broken_streams),
        ("learn_stream_pace", &mut c.learn_stream_pace),
    ] {
        if f.get(name).is_some() {
            f.flag(name, slot.insert(false))?;
        }
    }
    if let Some(list) = f.get("key_quotas") {
        let Value::Array(list) = list else { return Err(EngineError::config("key_quotas", "must be a list")) };
        for (i, q) in list.iter().enumerate() {
            let q = Fields::of(format!("key_quotas[{i}]"), q, KEY_QUOTA)?;
            let mut quota = crate::config::key_quotas::KeyQuotaConfig::default();
            q.text("measure", &mut quota.measure)?;
            q.text("per", &mut quota.per)?;
            q.float("limit", &mut quota.limit)?;
            c.key_quotas.push(quota);
        }
    }
    c.probe_interval_ms = f.opt_int("probe_interval_ms")?;
    if f.get("priority").is_some() {
        f.text("priority", c.priority.insert(String::new()))?;
    }
    for (name, slot) in [
        ("failure_rate", &mut c.failure_rate),
        ("open_growth", &mut c.open_growth),
        ("type_version", &mut c.type_version),
    ] {
        f.float(name, slot)?;
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_config_as_serde_does() {
        for text in [
            r#"{"providers":[{"name":"a"}]}"#,
            r#"{"providers":[{"name":"a","method":"post","max_attempts":2,"deadline_ms":5,"threshold":null,"open_ms":9,"rate_limit":{"requests":3,"period_ms":1000},"max_in_flight":4}],"strategy":"none","base_ms":1,"cap_ms":2,"max_attempts":3,"deadline_ms":4,"budget_ms":5,"retry_after_cap_ms":6,"defer_spread_ms":7,"retry_statuses":"500","health_statuses":"500-599","count_429":true,"retry_unsafe_methods":true,"next_provider_when_input_too_long":true,"next_provider_on_client_error":false,"fail_over_first":true,"streams":true,"first_chunk_deadline_ms":3,"stream_idle_ms":4,"trip_rule":"failure_rate","failure_rate":0.25,"min_calls":8,"threshold":9,"window_ms":10,"open_ms":11,"open_growth":1.5,"open_max_ms":12,"half_open_probes":0,"successes_to_close":2}"#,
            r#"{"providers":[{"name":"a","rate_limit":{"requests":3,"period_ms":1000,"burst":2}}],"open_growth":3,"base_ms":-5}"#,
            // What the panel hands over when an option is left out: the engine's defaults fill in.
            r#"{"providers":[{"name":"a","rate_limit":{"requests":5}}]}"#,
        ] {
            let serdes: ChainConfig = serde_json::from_str(text).unwrap();
            assert_eq!(chain_config(text).unwrap(), serdes, "{text}");
        }
        for (text, field) in [
            (r#"{"providers":[{"name":"a"}],"bogus":1}"#, "bogus"),
            (r#"{"providers":[{"name":"a","x":1}]}"#, "providers[0].x"),
            (r#"{"providers":[{"name":"a"}],"base_ms":"400"}"#, "base_ms"),
            (r#"{"providers":[{"name":"a"}],"base_ms":1.5}"#, "base_ms"),
            (r#"{"providers":[{"name":"a","rate_limit":{"requests":"5"}}]}"#, "providers[0].rate_limit.requests"),
            (
                r#"{"providers":[{"name":"a"}],"next_provider_when_input_too_long":1}"#,
                "next_provider_when_input_too_long",
            ),
            (r#"{"providers":[{"name":"a"}],"fail_over_first":"yes"}"#, "fail_over_first"),
            (r#"{"providers":{}}"#, "providers"),
            (r#"[1]"#, "config"),
        ] {
            assert!(serde_json::from_str::<ChainConfig>(text).is_err(), "serde refuses {text} too");
            let e = chain_config(text).unwrap_err();
            let got = e.field().unwrap_or_default();
            assert!(got == field || (field == "config" && got.is_empty()), "{text}: {got}");
        }
    }

    #[test]
    fn the_panels_zeros_read_as_unset() {
        let c = chain_config(
            r#"{"providers":[{"name":"a","threshold":0,"max_attempts":0,"max_in_flight":0,"rate_limit":{"requests":0,"period_ms":5}},{"name":"b","rate_limit":{"period_ms":5}}]}"#,
        )
        .unwrap();
        let unset = ProviderConfig { name: "a".into(), ..Default::default() };
        assert_eq!(c.providers[0], unset, "0 is the node's value, and 0 requests no rate limit");
        assert_eq!(c.providers[1].rate_limit, None, "no requests given: no rate limit");
        let limit = chain_config(r#"{"providers":[{"name":"a","rate_limit":{"requests":5}}]}"#).unwrap();
        assert_eq!(limit.providers[0].rate_limit, Some(RateLimitConfig { requests: 5, ..Default::default() }));
    }
}
