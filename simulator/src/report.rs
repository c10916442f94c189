//! The comparison table: one row per policy, as text or as JSON (a later run in real n8n is
//! compared against the JSON).
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
        }
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
    let widths: Vec<usize> = (0..HEADERS.len())
        .map(|c| cells.iter().map(|r| r[c].len()).chain([HEADERS[c].len()]).max().unwrap_or(0))
        .collect();
    let line = |r: &[String]| -> String {
        let mut s = format!("{:<w$}", r[0], w = widths[0]);
        for c in 1..r.len() {
            s += &format!("  {:>w$}", r[c], w = widths[c]);
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&HEADERS.map(String::from));
    out += &line(&widths.iter().map(|&w| "-".repeat(w)).collect::<Vec<_>>());
    for r in &cells {
        out += &line(r);
    }
    out
}

/// A line describing the scenario above its table.
pub fn describe(sc: &Scenario) -> String {
    let v = &sc.vendor;
    let mut parts = vec![format!("latency {} ms", v.latency_ms)];
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
