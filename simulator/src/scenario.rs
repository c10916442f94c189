//! A scenario file: the fleet, the executions, the vendor over time, an optional fallback, the
//! engine's node settings and the policies to compare. `simulate --help` documents the format.
use crate::fields::{brief, check, Fields};
use crate::policy::{self, Policy};
use crate::target;
use crate::vendor::{Ban, Latency, LatencyChange, LogNormal, Outage, Quota, Refusal, Slow, VendorSpec};
use resilient_engine::config::{ChainConfig, ProviderConfig, RateLimitConfig};
use resilient_engine::EngineError;
use serde_json::{Map, Value};

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub horizon_ms: u64,
    pub plot_s: Option<u64>,
    pub workers: usize,
    pub concurrency: u32,
    pub executions: Executions,
    pub vendor: VendorSpec,
    pub fallback: Option<VendorSpec>,
    pub engine: ChainConfig,
    /// Fraction of the vendor's quota the product's shared soft rate limit runs at.
    pub soft_limit: f64,
    /// The node's *Max In Flight* on the primary (engine policies): calls in flight at once.
    pub in_flight_cap: Option<i64>,
    pub retry_on_fail: RetryOnFail,
    pub sleep_loop_ms: u64,
    pub policies: Vec<Policy>,
    /// Keys of `target::KEYS` this scenario holds the product to.
    pub targets: Vec<&'static str>,
}

#[derive(Debug, Clone)]
pub struct Executions {
    /// Waiting in the queue at t = 0.
    pub queued: u32,
    /// Then `count` more, evenly spaced at `per_s`, from `start_ms`.
    pub count: u32,
    pub per_s: f64,
    pub start_ms: u64,
}

impl Executions {
    pub fn total(&self) -> u32 {
        self.queued + self.count
    }

    /// When each execution enters the queue, in order.
    pub fn arrivals(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.total()).map(|exec| self.arrival_ms(exec))
    }

    /// When execution `exec` first enters the queue.
    pub fn arrival_ms(&self, exec: u32) -> u64 {
        match exec.checked_sub(self.queued) {
            None => 0,
            Some(j) => self.start_ms + (j as f64 * 1000.0 / self.per_s) as u64,
        }
    }
}

#[derive(Debug, Clone)]
pub struct RetryOnFail {
    pub tries: u32,
    pub wait_ms: u64,
}

impl Scenario {
    pub fn load(path: &str) -> Result<Scenario, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: cannot read: {e}"))?;
        let value: Value = serde_json::from_str(&text).map_err(|e| format!("{path}: not valid JSON: {e}"))?;
        Scenario::from_value(&value).map_err(|e| format!("{path}: {e}"))
    }

    pub fn from_value(v: &Value) -> Result<Scenario, String> {
        let f = Fields::new("", v)?;
        let name = f.opt_str("name")?.unwrap_or("unnamed scenario").to_string();
        f.opt_str("about")?;
        let seed = f.u64_or("seed", 1)?;
        let horizon_s = f.f64_or("horizon_s", 3600.0)?;
        check(horizon_s > 0.0 && horizon_s <= 7.0 * 86_400.0, f.at("horizon_s"), || {
            format!("must be in (0, 604800] seconds, got {horizon_s}")
        })?;
        let plot_s = f.opt_u64("plot_s")?;
        check(plot_s != Some(0), f.at("plot_s"), || "must be at least 1".into())?;
        let workers = f.need_u64("workers")?;
        check((1..=10_000).contains(&workers), f.at("workers"), || format!("must be 1 to 10000, got {workers}"))?;
        let concurrency = f.need_u64("concurrency")?;
        check((1..=10_000).contains(&concurrency), f.at("concurrency"), || {
            format!("must be 1 to 10000, got {concurrency}")
        })?;
        let executions = executions(&f.need_obj("executions")?)?;
        let vendor = vendor_spec(&f.need_obj("vendor")?)?;
        let fallback = f.opt_obj("fallback")?.map(|o| vendor_spec(&o)).transpose()?;
        let engine = engine(f.raw("engine"), &f.at("engine"))?;
        let soft_limit = f.f64_or("soft_limit", 0.8)?;
        check(soft_limit > 0.0 && soft_limit <= 1.0, f.at("soft_limit"), || {
            format!("a fraction of the vendor quota in (0, 1], got {soft_limit}")
        })?;
        let in_flight_cap = f.opt_u64("in_flight_cap")?;
        check(in_flight_cap.is_none_or(|c| (1..=100_000).contains(&c)), f.at("in_flight_cap"), || {
            format!("must be 1 to 100000, got {}", in_flight_cap.unwrap_or(0))
        })?;
        let in_flight_cap = in_flight_cap.map(|c| c as i64);
        let retry_on_fail = match f.opt_obj("retry_on_fail")? {
            None => RetryOnFail { tries: 5, wait_ms: 1000 },
            Some(r) => {
                let tries = r.u64_or("tries", 5)?;
                check((1..=100).contains(&tries), r.at("tries"), || format!("must be 1 to 100, got {tries}"))?;
                let wait_ms = r.u64_or("wait_ms", 1000)?;
                r.done()?;
                RetryOnFail { tries: tries as u32, wait_ms }
            }
        };
        let sleep_loop_ms = match f.opt_obj("sleep_loop")? {
            None => 1000,
            Some(s) => {
                let ms = s.u64_or("wait_ms", 1000)?;
                check(ms >= 1, s.at("wait_ms"), || "must be at least 1 ms".into())?;
                s.done()?;
                ms
            }
        };
        let policies = match f.raw("policies") {
            None => policy::ALL.to_vec(),
            Some(_) => {
                let mut out = Vec::new();
                for (path, p) in f.list("policies")? {
                    let key = p.as_str().ok_or_else(|| format!("{path}: expected a policy name, got {}", brief(p)))?;
                    let keys: Vec<&str> = policy::NAMED.iter().map(|p| p.key()).collect();
                    out.push(
                        Policy::parse(key)
                            .ok_or_else(|| format!("{path}: unknown policy '{key}' (one of {})", keys.join(", ")))?,
                    );
                }
                check(!out.is_empty(), f.at("policies"), || "name at least one policy".into())?;
                if let Some(p) = out.iter().find(|p| p.routing().is_some()) {
                    check(f.raw("fallback").is_some(), f.at("policies"), || {
                        format!("{} routes between the vendor and the fallback: add a fallback", p.key())
                    })?;
                }
                out
            }
        };
        let targets = match f.raw("targets") {
            None => target::KEYS.to_vec(),
            Some(_) => {
                let mut out = Vec::new();
                for (path, t) in f.list("targets")? {
                    let key = t.as_str().ok_or_else(|| format!("{path}: expected a target name, got {}", brief(t)))?;
                    out.push(*target::KEYS.iter().find(|k| **k == key).ok_or_else(|| {
                        format!("{path}: unknown target '{key}' (one of {})", target::KEYS.join(", "))
                    })?);
                }
                out
            }
        };
        f.done()?;
        let sc = Scenario {
            name,
            seed,
            horizon_ms: (horizon_s * 1000.0) as u64,
            plot_s,
            workers: workers as usize,
            concurrency: concurrency as u32,
            executions,
            vendor,
            fallback,
            engine,
            soft_limit,
            in_flight_cap,
            retry_on_fail,
            sleep_loop_ms,
            policies,
            targets,
        };
        // Every policy's chain must validate: build them once here, where an error can name its field.
        for v in std::iter::once(&sc.vendor).chain(sc.fallback.as_ref()) {
            let mut cfg = sc.engine.clone();
            cfg.providers =
                vec![ProviderConfig { name: "primary".into(), rate_limit: sc.soft_limit_of(v), ..Default::default() }];
            cfg.validate().map_err(|e| engine_error("soft_limit", e))?;
        }
        // A hedging policy's settings (its delay, its clamp) validate with hedging on.
        for mode in sc.policies.iter().filter_map(|p| p.hedge_mode()) {
            let mut cfg = sc.engine.clone();
            cfg.hedge = mode.into();
            cfg.providers = vec![ProviderConfig { name: "primary".into(), ..Default::default() }];
            cfg.validate().map_err(|e| engine_error("engine", e))?;
        }
        Ok(sc)
    }

    /// The shared soft rate limit for a vendor: `soft_limit` x its quota, same period, burst 1.
    pub fn soft_limit_of(&self, v: &VendorSpec) -> Option<RateLimitConfig> {
        let q = v.quota.as_ref()?;
        let requests = ((q.requests as f64 * self.soft_limit).floor() as i64).max(1);
        Some(RateLimitConfig { requests, period_ms: q.period_ms as i64, burst: 1 })
    }
}

fn executions(f: &Fields) -> Result<Executions, String> {
    let queued = f.u64_or("queued", 0)?;
    let count = f.u64_or("count", 0)?;
    let per_s = f.f64_or("per_s", 0.0)?;
    let start_s = f.f64_or("start_s", 0.0)?;
    f.done()?;
    check(queued + count >= 1, f.path().to_string(), || "give queued and/or count (at least one execution)".into())?;
    check(queued + count <= 10_000_000, f.path().to_string(), || "at most 10 000 000 executions".into())?;
    check(count == 0 || per_s > 0.0, f.at("per_s"), || {
        format!("an arrival rate > 0 per second is needed for count {count}")
    })?;
    check(start_s >= 0.0, f.at("start_s"), || format!("must be >= 0, got {start_s}"))?;
    Ok(Executions { queued: queued as u32, count: count as u32, per_s, start_ms: (start_s * 1000.0) as u64 })
}

fn vendor_spec(f: &Fields) -> Result<VendorSpec, String> {
    let latency_ms = f.opt_u64("latency_ms")?;
    let latency_jitter_ms = f.u64_or("latency_jitter_ms", 0)?;
    let lognormal = f.opt_obj("lognormal")?.map(|l| lognormal(&l)).transpose()?;
    check(lognormal.is_none() || latency_ms.is_none(), f.at("latency_ms"), || {
        "give latency_ms or lognormal, not both".into()
    })?;
    let latency_ms = latency_ms.unwrap_or(100);
    let slow = f.opt_obj("slow")?.map(|s| slow(&s)).transpose()?;
    let mut outages = Vec::new();
    for (path, v) in f.list("outages")? {
        outages.push(outage(&Fields::new(path, v)?)?);
    }
    let mut latency_changes: Vec<LatencyChange> = Vec::new();
    for (path, v) in f.list("latency_changes")? {
        let c = latency_change(&Fields::new(path.clone(), v)?, lognormal)?;
        if let Some(last) = latency_changes.last() {
            check(c.at_ms > last.at_ms, format!("{path}.at_s"), || {
                format!("changes in time order: must be after the one before ({} s)", last.at_ms as f64 / 1000.0)
            })?;
        }
        latency_changes.push(c);
    }
    let quota = f.opt_obj("quota")?.map(|q| quota(&q)).transpose()?;
    let ban = f.opt_obj("ban")?.map(|b| ban(&b)).transpose()?;
    check(ban.is_none() || quota.is_some(), f.at("ban"), || "a ban rule needs a quota to be over (add quota)".into())?;
    let limiter_during_outage = f.bool_or("limiter_during_outage", false)?;
    f.done()?;
    Ok(VendorSpec {
        latency_ms,
        latency_jitter_ms,
        lognormal,
        slow,
        outages,
        latency_changes,
        quota,
        ban,
        limiter_during_outage,
    })
}

/// From `at_s` on: `latency_ms` for a vendor of fixed latency; `median_ms` (and `p95_ms`, by
/// default the same spread: p95 / median as before) for a log-normal one.
fn latency_change(f: &Fields, lognormal: Option<LogNormal>) -> Result<LatencyChange, String> {
    let at_s = f.opt_f64("at_s")?.ok_or_else(|| format!("{}: when the latency changes is needed", f.at("at_s")))?;
    check(at_s >= 0.0, f.at("at_s"), || format!("must be >= 0, got {at_s}"))?;
    let latency = match lognormal {
        None => {
            for k in ["median_ms", "p95_ms"] {
                check(f.raw(k).is_none(), f.at(k), || {
                    "the vendor's latency is fixed (latency_ms): give latency_ms, or make it lognormal".into()
                })?;
            }
            Latency::Fixed(f.need_u64("latency_ms")?)
        }
        Some(l) => {
            check(f.raw("latency_ms").is_none(), f.at("latency_ms"), || {
                "the vendor's latency is log-normal: give median_ms (and p95_ms)".into()
            })?;
            let median_ms = f.need_u64("median_ms")?;
            check(median_ms >= 1, f.at("median_ms"), || "must be at least 1 ms".into())?;
            let p95_ms = f.opt_u64("p95_ms")?.map_or(median_ms as f64 * l.p95_ms / l.median_ms, |p| p as f64);
            check(p95_ms > median_ms as f64, f.at("p95_ms"), || {
                format!("must be above median_ms ({median_ms}), got {p95_ms}")
            })?;
            Latency::LogNormal(LogNormal { median_ms: median_ms as f64, p95_ms })
        }
    };
    f.done()?;
    Ok(LatencyChange { at_ms: (at_s * 1000.0) as u64, latency })
}

fn lognormal(f: &Fields) -> Result<LogNormal, String> {
    let median_ms = f.need_u64("median_ms")?;
    check(median_ms >= 1, f.at("median_ms"), || "must be at least 1 ms".into())?;
    let p95_ms = f.need_u64("p95_ms")?;
    check(p95_ms > median_ms, f.at("p95_ms"), || format!("must be above median_ms ({median_ms}), got {p95_ms}"))?;
    f.done()?;
    Ok(LogNormal { median_ms: median_ms as f64, p95_ms: p95_ms as f64 })
}

fn slow(f: &Fields) -> Result<Slow, String> {
    let share = f.opt_f64("share")?.ok_or_else(|| format!("{}: a share of the calls is needed", f.at("share")))?;
    check(share > 0.0 && share < 1.0, f.at("share"), || format!("must be in (0, 1), got {share}"))?;
    let ms = f.need_u64("ms")?;
    f.done()?;
    Ok(Slow { share, ms })
}

fn outage(f: &Fields) -> Result<Outage, String> {
    let from_s = f.f64_or("from_s", 0.0)?;
    let to_s = f.opt_f64("to_s")?;
    check(from_s >= 0.0, f.at("from_s"), || format!("must be >= 0, got {from_s}"))?;
    if let Some(to) = to_s {
        check(to > from_s, f.at("to_s"), || format!("must be after from_s ({from_s}), got {to}"))?;
    }
    let refusal = refusal(f)?;
    let latency_ms = f.opt_u64("latency_ms")?;
    let share = f.f64_or("share", 1.0)?;
    check(share > 0.0 && share <= 1.0, f.at("share"), || format!("must be in (0, 1], got {share}"))?;
    f.done()?;
    let to_ms = to_s.map_or(u64::MAX, |t| (t * 1000.0) as u64);
    Ok(Outage { from_ms: (from_s * 1000.0) as u64, to_ms, refusal, latency_ms, share })
}

fn quota(f: &Fields) -> Result<Quota, String> {
    let requests = f.need_u64("requests")?;
    check((1..=1_000_000).contains(&requests), f.at("requests"), || format!("must be 1 to 1000000, got {requests}"))?;
    let period_ms = f.u64_or("period_ms", 1000)?;
    check((1..=86_400_000).contains(&period_ms), f.at("period_ms"), || {
        format!("must be 1 to 86400000 ms, got {period_ms}")
    })?;
    let retry_after_s = f.opt_u64("retry_after_s")?;
    f.done()?;
    Ok(Quota { requests: requests as u32, period_ms, retry_after_s })
}

fn ban(f: &Fields) -> Result<Ban, String> {
    let over_quota_s = f.u64_or("over_quota_s", 3)?;
    check((1..=3600).contains(&over_quota_s), f.at("over_quota_s"), || {
        format!("must be 1 to 3600 seconds, got {over_quota_s}")
    })?;
    let for_s = f.f64_or("for_s", 600.0)?;
    check(for_s > 0.0, f.at("for_s"), || format!("must be > 0 seconds, got {for_s}"))?;
    let refusal = refusal(f)?;
    let latency_ms = f.opt_u64("latency_ms")?;
    f.done()?;
    Ok(Ban { over_quota_s: over_quota_s as u32, for_ms: (for_s * 1000.0) as u64, refusal, latency_ms })
}

/// Exactly one of `status` (an HTTP status) or `error` (a Node error code).
fn refusal(f: &Fields) -> Result<Refusal, String> {
    let status = f.opt_u64("status")?;
    let error = f.opt_str("error")?;
    match (status, error) {
        (Some(s), None) => {
            check((100..=599).contains(&s), f.at("status"), || format!("not an HTTP status (100-599): {s}"))?;
            Ok(Refusal::Status(s as u16))
        }
        (None, Some(e)) => {
            check(!e.trim().is_empty(), f.at("error"), || "an error code such as ECONNREFUSED".into())?;
            Ok(Refusal::Error(e.trim().to_string()))
        }
        _ => Err(format!(
            "{}: give either status (e.g. 502) or error (e.g. \"ECONNREFUSED\"), not both or neither",
            f.path()
        )),
    }
}

/// The node-level engine settings (ChainConfig's fields); the simulator builds the providers.
fn engine(v: Option<&Value>, path: &str) -> Result<ChainConfig, String> {
    let Some(v) = v else { return Ok(ChainConfig::default()) };
    let Value::Object(map) = v else {
        return Err(format!("{path}: expected an object of node settings, got {}", brief(v)));
    };
    for (k, val) in map {
        if k == "providers" {
            return Err(format!(
                "{path}.providers: the simulator builds the chain from vendor and fallback; leave it out"
            ));
        }
        // One field at a time, so the error names it even for a value of the wrong type.
        let one = Value::Object(Map::from_iter([(k.clone(), val.clone())]));
        serde_json::from_value::<ChainConfig>(one).map_err(|e| format!("{path}.{k}: {e}"))?;
    }
    let cfg: ChainConfig = serde_json::from_value(v.clone()).map_err(|e| format!("{path}: {e}"))?;
    let mut probe = cfg.clone();
    probe.providers = vec![ProviderConfig { name: "primary".into(), ..Default::default() }];
    probe.validate().map_err(|e| engine_error(path, e))?;
    Ok(cfg)
}

fn engine_error(path: &str, e: EngineError) -> String {
    match e {
        EngineError::InvalidConfig { field, message } => format!("{path}.{field}: {message}"),
        other => format!("{path}: {other}"),
    }
}
