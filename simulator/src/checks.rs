//! The targets this product is held to, checked and printed (never asserted here): fewer
//! requests than the loop, no 429 and no ban, peak after recovery under the soft limit, last
//! item within 1.5x of the ideal, nothing lost; with hedging, a p99 within 3x the vendor's
//! tail-free median for at most 6 % extra requests; with latency routing, >= 85 % of the calls
//! at the faster provider and a move within 10 s of a latency change; plus figures to read.
use crate::policy::Policy;
use crate::report::Row;
use crate::routing::Shift;
use crate::run::Run;
use crate::scenario::Scenario;
use serde_json::{json, Value};

pub struct Check {
    pub key: Option<&'static str>,
    /// `None`: a figure to read, not a target (or not one of this scenario's targets).
    pub ok: Option<bool>,
    pub text: String,
}

impl Check {
    fn info(text: String) -> Check {
        Check { key: None, ok: None, text }
    }

    pub fn line(&self) -> String {
        let tag = match self.ok {
            Some(true) => "[ok]  ",
            Some(false) => "[MISS]",
            None => "[info]",
        };
        format!("  {tag} {}", self.text)
    }

    pub fn json(&self) -> Value {
        json!({ "target": self.key, "ok": self.ok, "check": self.text })
    }
}

/// Every check of the product's run, in order: the scenario's targets, then figures to read.
pub fn all(sc: &Scenario, runs: &[Run], rows: &[Row], ideal_ms: f64) -> Vec<Check> {
    let find = |p: Policy| runs.iter().position(|r| r.policy == p);
    let (product, looped, rof, per_process) =
        (find(Policy::SharedStore), find(Policy::SleepLoop), find(Policy::RetryOnFail), find(Policy::PerProcess));
    let mut out = Vec::new();
    let Some(pi) = product else { return out };
    // A check this scenario does not hold the product to is still printed, as a figure.
    let target = |key: &'static str, ok: bool, text: String| {
        if sc.targets.contains(&key) {
            Check { key: Some(key), ok: Some(ok), text }
        } else {
            Check { key: Some(key), ok: None, text: format!("{text} [not a target of this scenario]") }
        }
    };
    let (p, prun) = (&rows[pi], &runs[pi]);
    let v = &sc.vendor;

    if let (Some(first), Some(li)) = (v.outages.iter().map(|o| o.from_ms).min(), looped) {
        // The incident: from the outage's start until the vendor has recovered and this
        // product's last item is done (the horizon if either never happens).
        let from_s = first / 1000;
        let recovered_s = v.recovered_ms().unwrap_or(0).min(sc.horizon_ms).div_ceil(1000);
        let to_s = p.last_done_s.map_or(sc.horizon_ms / 1000, |s| s.ceil() as u64 + 1).max(recovered_s);
        let ours = prun.tally.requests_between(from_s, to_s);
        let theirs = runs[li].tally.requests_between(from_s, to_s);
        let ratio = theirs as f64 / ours.max(1) as f64;
        out.push(target(
            "fewer_requests",
            ratio >= 10.0,
            format!("requests at the vendor over the incident ({from_s} s .. {to_s} s): {ours} vs {theirs} for the sleep loop = {ratio:.1}x fewer (target >= 10x)"),
        ));
    }
    if v.quota.is_some() {
        out.push(target(
            "no_429",
            p.over_quota == 0,
            format!("over-quota (429) answers for this product: {} (target 0)", p.over_quota),
        ));
    }
    if v.ban.is_some() {
        out.push(target(
            "no_ban",
            p.banned_s == 0.0,
            format!("time banned for this product: {:.0} s (target 0)", p.banned_s),
        ));
        if let Some(li) = looped {
            out.push(target(
                "loop_banned",
                rows[li].banned_s > 0.0,
                format!("the sleep loop gets banned: {:.0} s banned (expected > 0)", rows[li].banned_s),
            ));
        }
    }
    if let (Some(q), Some(limit), Some(peak)) = (&v.quota, sc.soft_limit_of(v), p.peak_window_after_recovery) {
        let per = if q.period_ms == 1000 { "s".to_string() } else { format!("{} ms", q.period_ms) };
        out.push(target(
            "peak_under_soft_limit",
            peak as i64 <= limit.requests,
            format!(
                "peak arrivals per {per} after recovery for this product: {peak} (target <= soft limit {}, quota {})",
                limit.requests, q.requests
            ),
        ));
    }
    match (p.last_done_s, p.all_ended() && p.lost == 0) {
        (Some(done), true) if ideal_ms.is_finite() => {
            let ideal = ideal_ms / 1000.0;
            out.push(target(
                "near_ideal",
                done <= 1.5 * ideal,
                format!("last item done at {done:.1} s vs ideal {ideal:.1} s = {:.2}x (target <= 1.5x)", done / ideal),
            ));
        }
        _ => out.push(target(
            "near_ideal",
            false,
            "not every item was done by the horizon: no finish time to compare with the ideal".into(),
        )),
    }
    out.push(target("none_lost", p.lost == 0, format!("items lost by this product: {} (target 0)", p.lost)));
    // Issue 30's goal for hedging: the tail cut to 3x the tail-free median for <= 6 % more calls.
    let tail_free = sc.vendor.tail_free_median_ms();
    for row in rows.iter().zip(runs).filter(|(_, r)| r.policy.hedge_mode().is_some()).map(|(row, _)| row) {
        let (Some(p99), Some(extra)) = (row.p99_ms, row.extra_pct()) else { continue };
        let ok = p99 as f64 <= 3.0 * tail_free && extra <= 6.0;
        let unhedged = p.p99_ms.map_or(String::new(), |u| format!("; without hedging p99 {u} ms"));
        out.push(target(
            "hedge_tail",
            ok,
            format!(
                "{}: p99 {p99} ms (target <= 3 x the tail-free median {tail_free:.0} ms = {:.0} ms), {extra:.1} % extra requests (target <= 6 %){unhedged}",
                row.label,
                3.0 * tail_free
            ),
        ));
    }
    // Issue 29's goal for latency routing: >= 85 % at the faster provider, a move within 10 s.
    for row in rows.iter().filter(|r| r.key == Policy::RouteLatency.key()) {
        let Some(f) = &row.routing else { continue };
        let share = f.faster_before_pct.unwrap_or(0.0);
        let (moved_ok, moved) = match f.shift {
            Shift::NotApplicable => (true, String::new()),
            Shift::Never => {
                (false, "; most calls never moved to the newly faster provider (target within 10 s)".into())
            }
            Shift::After(ms) => (
                ms <= 10_000,
                format!(
                    "; most calls moved to the newly faster provider {:.1} s after the change (target <= 10 s)",
                    ms as f64 / 1000.0
                ),
            ),
        };
        let when = if f.change_ms.is_some() { " before the change" } else { "" };
        out.push(target(
            "latency_routing",
            share >= 85.0 && moved_ok,
            format!("{}: {share:.1} % of the calls at the faster provider{when} (target >= 85 %){moved}", row.label),
        ));
    }
    if let Some(ri) = rof {
        out.push(Check::info(format!(
            "requests at the primary: {} for this product vs {} for Retry On Fail",
            p.requests, rows[ri].requests
        )));
        let during: usize = sc.executions.arrivals().filter(|&t| v.outage_at(t).is_some()).count();
        out.push(Check::info(format!(
            "Retry On Fail lost {} of {} executions ({} arrived during an outage window)",
            rows[ri].lost,
            sc.executions.total(),
            during
        )));
    }
    if let Some(qi) = per_process {
        if rows[qi].probes > 0 || p.probes > 0 {
            out.push(Check::info(format!(
                "half-open probes at the primary: {} with the shared store (K = {}) vs {} with per-process breakers ({} workers)",
                p.probes, sc.engine.half_open_probes, rows[qi].probes, sc.workers
            )));
        }
    }
    out
}
