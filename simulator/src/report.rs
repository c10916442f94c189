//! The comparison table: one row per policy, as text or as JSON (a later run in real n8n is
//! compared against the JSON); and, when hedging policies run, the latency table beside it:
//! each policy's item latency (p50, p95, p99) and requests per item.
use crate::policy::Policy;
use crate::run::Run;
use crate::scenario::Scenario;
use serde_json::{json, Value};

pub struct Row {
    pub key: &'static str,
    pub label: String,
    pub requests: u64,
    pub fallback_requests: u64,
    pub in_outage: u64,
    pub in_outage_before_open: u64,
    pub probes: u64,
    /// Most arrivals at the primary in one second after its last outage ended.
    pub peak_after_recovery: Option<u32>,
    /// The same per window of the vendor's quota (equal to the above for a per-second quota).
    pub peak_window_after_recovery: Option<u32>,
    pub over_quota: u64,
    pub banned_s: f64,
    pub last_done_s: Option<f64>,
    pub done: u64,
    pub done_by_fallback: u64,
    pub lost: u64,
    pub deferrals: u64,
    pub deferred_at_end: u64,
    pub unfinished: u64,
    /// Item latency (arrival to done, ms) at the 50th, 95th and 99th percentile.
    pub p50_ms: Option<u64>,
    pub p95_ms: Option<u64>,
    pub p99_ms: Option<u64>,
    /// Requests at every provider per item that ended (done or lost).
    pub requests_per_item: Option<f64>,
    pub hedges: u64,
    pub abandoned: u64,
    pub served_twice: u64,
}

impl Row {
    pub fn of(sc: &Scenario, run: &Run) -> Row {
        let t = &run.tally;
        let recovered_ms = sc.vendor.recovered_ms().unwrap_or(0);
        let recovered = recovered_ms < sc.horizon_ms;
        Row {
            key: run.policy.key(),
            label: label(run.policy, sc),
            requests: t.requests[0],
            fallback_requests: t.requests[1],
            in_outage: t.in_outage,
            in_outage_before_open: t.in_outage_before_open,
            probes: t.probes,
            peak_after_recovery: recovered.then(|| t.peak_per_second_from(recovered_ms.div_ceil(1000))),
            peak_window_after_recovery: if recovered { t.peak_per_window_from(recovered_ms) } else { None },
            over_quota: t.over_quota,
            banned_s: run.banned_ms as f64 / 1000.0,
            last_done_s: t.last_done_ms.map(|ms| ms as f64 / 1000.0),
            done: t.done,
            done_by_fallback: t.done_by_fallback,
            lost: t.lost,
            deferrals: t.deferrals,
            deferred_at_end: run.deferred_at_end,
            unfinished: run.unfinished,
            p50_ms: t.latency_quantile_ms(0.50),
            p95_ms: t.latency_quantile_ms(0.95),
            p99_ms: t.latency_quantile_ms(0.99),
            requests_per_item: (t.done + t.lost > 0)
                .then(|| (t.requests[0] + t.requests[1]) as f64 / (t.done + t.lost) as f64),
            hedges: t.hedges,
            abandoned: t.abandoned,
            served_twice: t.served_twice,
        }
    }

    /// Requests beyond one per item, in per cent of the items (hedges, retries, fail-overs).
    pub fn extra_pct(&self) -> Option<f64> {
        self.requests_per_item.map(|r| (r - 1.0) * 100.0)
    }

    pub fn all_ended(&self) -> bool {
        self.deferred_at_end == 0 && self.unfinished == 0
    }

    pub fn json(&self) -> Value {
        json!({
            "policy": self.key,
            "label": self.label,
            "requests": self.requests,
            "fallback_requests": self.fallback_requests,
            "requests_in_outage": self.in_outage,
            // The outage's requests: before the primary's breaker opened, its probes, the rest
            // (retries the breaker did not stop; a policy without a breaker has only the rest).
            "in_outage_before_open": self.in_outage_before_open,
            "probes": self.probes,
            "peak_per_s_after_recovery": self.peak_after_recovery,
            "peak_per_quota_window_after_recovery": self.peak_window_after_recovery,
            "over_quota_429": self.over_quota,
            "banned_s": self.banned_s,
            "last_done_s": self.last_done_s,
            "done": self.done,
            "done_by_fallback": self.done_by_fallback,
            "lost": self.lost,
            "deferrals": self.deferrals,
            "deferred_at_end": self.deferred_at_end,
            "unfinished": self.unfinished,
            "latency_p50_ms": self.p50_ms,
            "latency_p95_ms": self.p95_ms,
            "latency_p99_ms": self.p99_ms,
            "requests_per_item": self.requests_per_item,
            "extra_requests_pct": self.extra_pct(),
            "hedges": self.hedges,
            "abandoned": self.abandoned,
            "served_twice": self.served_twice,
        })
    }
}

/// A policy's name in the table, with the scenario's settings for the baselines.
fn label(policy: Policy, sc: &Scenario) -> String {
    match policy {
        Policy::RetryOnFail => {
            format!("n8n Retry On Fail ({} x {} ms)", sc.retry_on_fail.tries, sc.retry_on_fail.wait_ms)
        }
        Policy::SleepLoop => format!("retry forever, sleep({} ms)", sc.sleep_loop_ms),
        Policy::JitterOnly => "full jitter, no shared state".into(),
        Policy::PerProcess => "per-process breakers".into(),
        Policy::SharedStore => "this product (shared store)".into(),
        Policy::HedgeFixed => format!("hedged, fixed delay {} ms", sc.engine.hedge_delay_ms),
        Policy::HedgeP95 => {
            format!("hedged at the p95 ({}..{} ms)", sc.engine.hedge_min_ms, sc.engine.hedge_max_ms)
        }
    }
}

const HEADERS: [&str; 13] = [
    "policy",
    "requests",
    "fallback",
    "in outage",
    "probes",
    "peak/s after",
    "429s",
    "banned s",
    "last done s",
    "done",
    "lost",
    "deferred",
    "unfinished",
];

pub fn table(rows: &[Row]) -> String {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.label.clone(),
                r.requests.to_string(),
                r.fallback_requests.to_string(),
                r.in_outage.to_string(),
                r.probes.to_string(),
                r.peak_after_recovery.map_or("-".into(), |p| p.to_string()),
                r.over_quota.to_string(),
                format!("{:.0}", r.banned_s),
                r.last_done_s.map_or("-".into(), |s| format!("{s:.1}")),
                r.done.to_string(),
                r.lost.to_string(),
                r.deferred_at_end.to_string(),
                r.unfinished.to_string(),
            ]
        })
        .collect();
    layout(&HEADERS, &cells)
}

const LATENCY_HEADERS: [&str; 9] =
    ["policy", "p50 ms", "p95 ms", "p99 ms", "requests/item", "extra %", "hedges", "done", "lost"];

/// The side-by-side latency table (the hedging comparison): item latency from arrival to done
/// at p50, p95 and p99, requests per item and the extra requests (beyond one per item) in %.
pub fn latency_table(rows: &[Row]) -> String {
    let ms = |v: Option<u64>| v.map_or("-".into(), |v| v.to_string());
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.label.clone(),
                ms(r.p50_ms),
                ms(r.p95_ms),
                ms(r.p99_ms),
                r.requests_per_item.map_or("-".into(), |v| format!("{v:.3}")),
                r.extra_pct().map_or("-".into(), |v| format!("{v:.1}")),
                r.hedges.to_string(),
                r.done.to_string(),
                r.lost.to_string(),
            ]
        })
        .collect();
    layout(&LATENCY_HEADERS, &cells)
}

/// Headers, a rule and the rows: the first column left-aligned, the others right-aligned.
fn layout(headers: &[&str], cells: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..headers.len())
        .map(|c| cells.iter().map(|r| r[c].len()).chain([headers[c].len()]).max().unwrap_or(0))
        .collect();
    let line = |r: &[String]| -> String {
        let mut s = format!("{:<w$}", r[0], w = widths[0]);
        for c in 1..r.len() {
            s += &format!("  {:>w$}", r[c], w = widths[c]);
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&headers.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    out += &line(&widths.iter().map(|&w| "-".repeat(w)).collect::<Vec<_>>());
    for r in cells {
        out += &line(r);
    }
    out
}

/// A line describing the scenario above its table.
pub fn describe(sc: &Scenario) -> String {
    let v = &sc.vendor;
    let mut parts = vec![match v.lognormal {
        Some(l) => format!("latency log-normal, median {} ms, p95 {} ms", l.median_ms, l.p95_ms),
        None => format!("latency {} ms", v.latency_ms),
    }];
    if let Some(s) = v.slow {
        parts.push(format!("{} % of calls take {} ms", s.share * 100.0, s.ms));
    }
    for o in &v.outages {
        let to = if o.to_ms == u64::MAX { "the end".into() } else { format!("{} s", o.to_ms as f64 / 1000.0) };
        parts.push(format!("{} from {} s to {to}", o.refusal.label(), o.from_ms as f64 / 1000.0));
    }
    if let Some(q) = &v.quota {
        parts.push(format!("quota {} per {} ms (429 + Retry-After above it)", q.requests, q.period_ms));
    }
    if let Some(b) = &v.ban {
        parts.push(format!(
            "over quota {} s in a row -> {} for {} s",
            b.over_quota_s,
            b.refusal.label(),
            b.for_ms / 1000
        ));
    }
    let e = &sc.executions;
    let mut load = Vec::new();
    if e.queued > 0 {
        load.push(format!("{} queued", e.queued));
    }
    if e.count > 0 {
        load.push(format!("{} arriving at {}/s from {} s", e.count, e.per_s, e.start_ms as f64 / 1000.0));
    }
    let fallback = match &sc.fallback {
        Some(f) => {
            format!("; fallback: latency {} ms{}", f.latency_ms, if f.outages.is_empty() { ", healthy" } else { "" })
        }
        None => String::new(),
    };
    format!(
        "{}\n  executions: {}; fleet: {} workers x {} slots; seed {}; horizon {} s\n  vendor: {}{fallback}",
        sc.name,
        load.join(" + "),
        sc.workers,
        sc.concurrency,
        sc.seed,
        sc.horizon_ms / 1000,
        parts.join(", ")
    )
}
