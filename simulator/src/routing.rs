//! Routing between the vendor and the fallback, read from one run's tallies: each provider's
//! share of the calls; the share sent to the faster provider before the first latency change
//! (of either) and after it; and how long after the change most calls had moved to the provider
//! that became the faster one. Calls are counted as they arrive at a provider (retries included).
use crate::scenario::Scenario;
use crate::tally::{Tally, TICK_MS};

/// The sliding window the move is read over.
pub const WINDOW_MS: u64 = 1_000;
/// A move counts only if it holds this long, to the last call: a coin flip's last few windows
/// (weighted 1:1 is at 50 %) do not make one.
pub const HOLD_MS: u64 = 10_000;
/// "After the change": from this long after it to the end (the goal's bound on the move).
pub const SETTLE_MS: u64 = 10_000;

/// How long after the change most calls went to the provider that became the faster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shift {
    /// No change of which provider is the faster one.
    NotApplicable,
    /// Most calls never moved (and stayed) there.
    Never,
    /// From this long after the change (the end of the first 1 s window from which every window
    /// to the last call sent most calls there).
    After(u64),
}

#[derive(Debug, Clone)]
pub struct Figures {
    /// Share of the calls at the vendor and at the fallback, in %.
    pub share_pct: [f64; 2],
    /// The first latency change of either provider, in ms.
    pub change_ms: Option<u64>,
    /// The faster provider (lower tail-free median) at the start (0: vendor, 1: fallback).
    pub faster_before: usize,
    /// The faster provider after the change.
    pub faster_after: Option<usize>,
    /// Share of the calls before the change (the whole run without one) sent to the faster then, %.
    pub faster_before_pct: Option<f64>,
    /// Share of the calls from `SETTLE_MS` after the change to the end sent to the faster then, %.
    pub faster_after_pct: Option<f64>,
    pub shift: Shift,
    /// Item latency p95 of the items that arrived before the change and from it on.
    pub p95_before_ms: Option<u64>,
    pub p95_after_ms: Option<u64>,
}

/// Whether a scenario gets the routing figures: it has a fallback, and it names a routing
/// policy or changes a latency (scenarios without either print what they always printed).
pub fn applies(sc: &Scenario) -> bool {
    let changes = sc.vendor.latency_changes.len() + sc.fallback.as_ref().map_or(0, |f| f.latency_changes.len());
    sc.fallback.is_some() && (changes > 0 || sc.policies.iter().any(|p| p.routing().is_some()))
}

/// The first latency change of the vendor or the fallback, in ms.
pub fn first_change_ms(sc: &Scenario) -> Option<u64> {
    std::iter::once(&sc.vendor)
        .chain(sc.fallback.as_ref())
        .filter_map(|v| v.latency_changes.first())
        .map(|c| c.at_ms)
        .min()
}

/// The faster provider at `now`: the lower tail-free median (the vendor on a tie).
pub fn faster_at(sc: &Scenario, now: u64) -> usize {
    match &sc.fallback {
        Some(f) if f.median_at_ms(now) < sc.vendor.median_at_ms(now) => 1,
        _ => 0,
    }
}

pub fn figures(sc: &Scenario, t: &Tally) -> Figures {
    let ticks = t.per_tick.iter().map(Vec::len).max().unwrap_or(0);
    let tick = |ms: u64| (ms.div_ceil(TICK_MS) as usize).min(ticks);
    let pct = |part: u64, all: u64| (all > 0).then(|| 100.0 * part as f64 / all as f64);
    let between = |p: usize, from: usize, to: usize| t.provider_requests_between_ticks(p, from, to);
    let all = t.requests[0] + t.requests[1];
    let share_pct = [pct(t.requests[0], all).unwrap_or(0.0), pct(t.requests[1], all).unwrap_or(0.0)];
    let change_ms = first_change_ms(sc);
    let faster_before = faster_at(sc, 0);
    let faster_after = change_ms.map(|c| faster_at(sc, c));
    let before = tick(change_ms.unwrap_or(u64::MAX));
    let faster_before_pct = pct(between(faster_before, 0, before), between(0, 0, before) + between(1, 0, before));
    let (mut faster_after_pct, mut shift) = (None, Shift::NotApplicable);
    let (mut p95_before_ms, mut p95_after_ms) = (None, None);
    if let (Some(c), Some(new)) = (change_ms, faster_after) {
        let settled = tick(c + SETTLE_MS);
        faster_after_pct = pct(between(new, settled, ticks), between(0, settled, ticks) + between(1, settled, ticks));
        if new != faster_before {
            shift = moved(t, new, tick(c), ticks, c);
        }
        p95_before_ms = t.latency_quantile_between_ms(0.95, 0, c);
        p95_after_ms = t.latency_quantile_between_ms(0.95, c, u64::MAX);
    }
    Figures {
        share_pct,
        change_ms,
        faster_before,
        faster_after,
        faster_before_pct,
        faster_after_pct,
        shift,
        p95_before_ms,
        p95_after_ms,
    }
}

/// The first window start from `first` (a tick) from which every `WINDOW_MS` window up to the
/// last call sends most calls (> 50 %) to `new`, held for at least `HOLD_MS`; its window's end,
/// after the change at `change_ms`.
fn moved(t: &Tally, new: usize, first: usize, ticks: usize, change_ms: u64) -> Shift {
    let w = (WINDOW_MS / TICK_MS) as usize;
    if ticks < first + w {
        return Shift::Never;
    }
    let last = ticks - w; // the last window's start
    let most = |s: usize| {
        let to_new = t.provider_requests_between_ticks(new, s, s + w);
        let all = to_new + t.provider_requests_between_ticks(1 - new, s, s + w);
        all > 0 && 2 * to_new > all
    };
    let mut from = last + 1;
    while from > first && most(from - 1) {
        from -= 1;
    }
    let held_ms = (ticks - from) as u64 * TICK_MS;
    if from > last || held_ms < HOLD_MS {
        return Shift::Never;
    }
    Shift::After(((from + w) as u64 * TICK_MS).saturating_sub(change_ms))
}
