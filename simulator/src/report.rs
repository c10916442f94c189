//! The comparison table: one row per policy, as text or as JSON (a later run in real n8n is
//! compared against the JSON); and, when hedging policies run, the latency table beside it:
//! each policy's item latency (p50, p95, p99) and requests per item; and, when policies route
//! between the vendor and the fallback, the routing table: each provider's share of the calls.
use crate::policy::Policy;
use crate::routing::{self, Figures, Shift};
use crate::run::Run;
use crate::scenario::Scenario;
use crate::vendor::{Latency, VendorSpec};
use serde_json::{json, Value};

pub struct Row {
    pub key: &'static str,
    pub label: String,
    pub requests: u64,
    pub fallback_requests: u64,
    pub in_outage: u64,
    pub in_outage_before_open: u64,
    pub probes: u64,
    /// The most probes within any 10 s, and how long after its recovery the primary served again.
    pub most_probes_in_10_s: usize,
    pub back_in_use_after_s: Option<f64>,
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
    /// Shares of the calls per provider and the move after a latency change (`routing::applies`).
    pub routing: Option<Figures>,
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
            most_probes_in_10_s: t.most_probes_within(10_000),
            back_in_use_after_s: t.back_in_use_ms.zip(t.recovered_ms).map(|(b, r)| (b - r) as f64 / 1000.0),
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
            routing: routing::applies(sc).then(|| routing::figures(sc, t)),
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
        let mut v = json!({
            "policy": self.key,
            "label": self.label,
            "requests": self.requests,
            "fallback_requests": self.fallback_requests,
            "requests_in_outage": self.in_outage,
            // The outage's requests: before the primary's breaker opened, its probes, the rest
            // (retries the breaker did not stop; a policy without a breaker has only the rest).
            "in_outage_before_open": self.in_outage_before_open,
            "probes": self.probes,
            "most_probes_in_10_s": self.most_probes_in_10_s,
            "back_in_use_s_after_recovery": self.back_in_use_after_s,
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
        });
        if let Some(f) = &self.routing {
            v["routing"] = json!({
                "vendor_share_pct": f.share_pct[0],
                "fallback_share_pct": f.share_pct[1],
                "change_s": f.change_ms.map(|ms| ms as f64 / 1000.0),
                "faster_before": provider_key(f.faster_before),
                "faster_after": f.faster_after.map(provider_key),
                "faster_before_pct": f.faster_before_pct,
                "faster_after_pct": f.faster_after_pct,
                "moved_after_s": match f.shift {
                    Shift::After(ms) => Some(ms as f64 / 1000.0),
                    _ => None,
                },
                "moved": !matches!(f.shift, Shift::Never),
                "latency_p95_before_ms": f.p95_before_ms,
                "latency_p95_after_ms": f.p95_after_ms,
            });
        }
        v
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
        Policy::SharedStore if sc.policies.iter().any(|p| p.routing().is_some()) => {
            format!("this product, {} (shared store)", routing_label(&sc.engine.routing))
        }
        Policy::SharedStore => "this product (shared store)".into(),
        Policy::HedgeFixed => format!("hedged, fixed delay {} ms", sc.engine.hedge_delay_ms),
        Policy::HedgeP95 => {
            format!("hedged at the p95 ({}..{} ms)", sc.engine.hedge_min_ms, sc.engine.hedge_max_ms)
        }
        Policy::RouteWeighted | Policy::RouteLatency => {
            format!("this product, {}", routing_label(policy.routing().expect("a routing policy")))
        }
    }
}

fn routing_label(routing: &str) -> String {
    match routing {
        "order" => "in order".into(),
        "weighted" => "weighted 1:1".into(),
        "latency" => "latency routing".into(),
        other => format!("{other} routing"),
    }
}

fn provider_key(i: usize) -> &'static str {
    ["vendor", "fallback"][i]
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

const ROUTING_HEADERS: [&str; 11] = [
    "policy",
    "vendor %",
    "fallback %",
    "faster % before",
    "faster % after",
    "moved after s",
    "p50 ms",
    "p95 ms",
    "p95 before",
    "p95 after",
    "lost",
];

/// The side-by-side routing table: each provider's share of the calls, the share at the faster
/// provider before the first latency change and from 10 s after it, when most calls had moved
/// to the provider that became the faster, and item latency (p95 over the run, before, after).
pub fn routing_table(rows: &[Row]) -> String {
    let ms = |v: Option<u64>| v.map_or("-".into(), |v| v.to_string());
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    let cells: Vec<Vec<String>> = rows
        .iter()
        .filter_map(|r| r.routing.as_ref().map(|f| (r, f)))
        .map(|(r, f)| {
            vec![
                r.label.clone(),
                format!("{:.1}", f.share_pct[0]),
                format!("{:.1}", f.share_pct[1]),
                pct(f.faster_before_pct),
                pct(f.faster_after_pct),
                match f.shift {
                    Shift::NotApplicable => "-".into(),
                    Shift::Never => "never".into(),
                    Shift::After(ms) => format!("{:.1}", ms as f64 / 1000.0),
                },
                ms(r.p50_ms),
                ms(r.p95_ms),
                ms(f.p95_before_ms),
                ms(f.p95_after_ms),
                r.lost.to_string(),
            ]
        })
        .collect();
    layout(&ROUTING_HEADERS, &cells)
}

/// What the routing table's "faster" and "moved" mean in this scenario, lines under it.
pub fn routing_note(sc: &Scenario) -> String {
    let name = |i: usize| ["the vendor", "the fallback"][i];
    let medians = |t: u64| {
        let f = sc.fallback.as_ref().map_or(0.0, |f| f.median_at_ms(t));
        format!("median {:.0} ms vs {f:.0} ms", sc.vendor.median_at_ms(t))
    };
    let Some(c) = routing::first_change_ms(sc) else {
        return format!("  faster: {} ({})\n", name(routing::faster_at(sc, 0)), medians(0));
    };
    let s = |ms: u64| ms as f64 / 1000.0;
    format!(
        "  faster: {} before {} s ({}), {} from then on ({})\n  faster % after: the calls from {} s on; \
         moved after: the end of the first {} s window after the change from which every window to the last call \
         sent most calls (> 50 %) to the newly faster provider (held >= {} s), else never\n",
        name(routing::faster_at(sc, 0)),
        s(c),
        medians(0),
        name(routing::faster_at(sc, c)),
        medians(c),
        s(c + routing::SETTLE_MS),
        s(routing::WINDOW_MS),
        s(routing::HOLD_MS)
    )
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
    let mut parts = vec![latency_text(v)];
    parts.extend(changes_text(v));
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
        Some(f) if f.lognormal.is_some() || !f.latency_changes.is_empty() => {
            let mut parts = vec![latency_text(f)];
            parts.extend(changes_text(f));
            format!("; fallback: {}{}", parts.join(", "), if f.outages.is_empty() { ", healthy" } else { "" })
        }
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

fn latency_text(v: &VendorSpec) -> String {
    match v.lognormal {
        Some(l) => format!("latency log-normal, median {} ms, p95 {} ms", l.median_ms, l.p95_ms),
        None => format!("latency {} ms", v.latency_ms),
    }
}

fn changes_text(v: &VendorSpec) -> Vec<String> {
    v.latency_changes
        .iter()
        .map(|c| match c.latency {
            Latency::Fixed(ms) => format!("from {} s: latency {ms} ms", c.at_ms as f64 / 1000.0),
            Latency::LogNormal(l) => {
                format!("from {} s: median {} ms, p95 {:.0} ms", c.at_ms as f64 / 1000.0, l.median_ms, l.p95_ms)
            }
        })
        .collect()
}
