//! What one policy's run counted: requests as they arrive at the vendors, answers, probes, and
//! how each execution ended.
use crate::vendor::ReplyKind;

/// The resolution of the per-provider arrivals over time (`per_tick`).
pub const TICK_MS: u64 = 100;

#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Requests arriving at the primary and at the fallback.
    pub requests: [u64; 2],
    /// Requests arriving at the primary during one of its outage windows.
    pub in_outage: u64,
    /// Of those, the requests before the primary's breaker first opened (the herd that finds
    /// the outage out): what the breaker cannot spare.
    pub in_outage_before_open: u64,
    /// The primary's breaker has opened (a transition to open was written).
    pub opened: bool,
    /// Half-open probes admitted at the primary, and when each was.
    pub probes: u64,
    pub probe_ms: Vec<u64>,
    /// The primary's last outage ends here (it recovers), where that is within the run.
    pub recovered_ms: Option<u64>,
    /// The first request the primary served from its recovery on: it is back in use.
    pub back_in_use_ms: Option<u64>,
    /// 429 answers (primary and fallback).
    pub over_quota: u64,
    /// Requests answered by a ban.
    pub banned_answers: u64,
    /// Arrivals at the primary and at the fallback per `TICK_MS` of virtual time.
    pub per_tick: [Vec<u32>; 2],
    /// Arrivals at the primary per second of virtual time.
    pub per_second: Vec<u32>,
    /// Arrivals at the primary per window of its quota (when it has one).
    pub per_window: Vec<u32>,
    pub window_ms: Option<u64>,
    pub done: u64,
    pub done_by_fallback: u64,
    pub lost: u64,
    /// Defer steps (each re-submission counts once).
    pub deferrals: u64,
    pub last_done_ms: Option<u64>,
    /// Hedges sent (calls sent while another call of the same item was out).
    pub hedges: u64,
    /// Calls aborted because another call of their item ended it.
    pub abandoned: u64,
    /// Executions done a second time (must stay 0: one end per execution, however many calls).
    pub served_twice: u64,
    /// Per execution done: from its arrival to its end, in ms (queueing and deferrals included).
    pub latencies_ms: Vec<u64>,
    /// When each of those was done (same order).
    pub done_at_ms: Vec<u64>,
}

impl Tally {
    pub fn new(window_ms: Option<u64>, recovered_ms: Option<u64>) -> Self {
        Tally { window_ms, recovered_ms, ..Default::default() }
    }

    /// A half-open probe admitted at the primary.
    pub fn probe(&mut self, now: u64) {
        self.probes += 1;
        self.probe_ms.push(now);
    }

    /// The most probes admitted within any `ms` (the fleet's probe rate at its worst).
    pub fn most_probes_within(&self, ms: u64) -> usize {
        let t = &self.probe_ms;
        (0..t.len()).map(|i| t[i..].iter().take_while(|&&at| at < t[i] + ms).count()).max().unwrap_or(0)
    }

    pub fn request(&mut self, provider: usize, now: u64, kind: ReplyKind, in_outage: bool) {
        self.requests[provider] += 1;
        bump(&mut self.per_tick[provider], (now / TICK_MS) as usize);
        match kind {
            ReplyKind::OverQuota => self.over_quota += 1,
            ReplyKind::Banned => self.banned_answers += 1,
            ReplyKind::Served | ReplyKind::Outage => {}
        }
        if provider != 0 {
            return;
        }
        if kind == ReplyKind::Served && self.back_in_use_ms.is_none() && self.recovered_ms.is_some_and(|r| now >= r) {
            self.back_in_use_ms = Some(now);
        }
        self.in_outage += in_outage as u64;
        self.in_outage_before_open += (in_outage && !self.opened) as u64;
        bump(&mut self.per_second, (now / 1000) as usize);
        if let Some(w) = self.window_ms {
            bump(&mut self.per_window, (now / w) as usize);
        }
    }

    pub fn done(&mut self, now: u64, by_fallback: bool, latency_ms: u64) {
        self.latencies_ms.push(latency_ms);
        self.done_at_ms.push(now);
        self.done += 1;
        self.done_by_fallback += by_fallback as u64;
        self.last_done_ms = Some(now);
    }

    /// The executions' latency at quantile `q` (nearest rank), `None` before one was done.
    pub fn latency_quantile_ms(&self, q: f64) -> Option<u64> {
        quantile(self.latencies_ms.clone(), q)
    }

    /// The same for the executions that arrived in `from_ms..to_ms`.
    pub fn latency_quantile_between_ms(&self, q: f64, from_ms: u64, to_ms: u64) -> Option<u64> {
        let arrived = |(&ms, &done): (&u64, &u64)| (from_ms..to_ms).contains(&(done - ms)).then_some(ms);
        quantile(self.latencies_ms.iter().zip(&self.done_at_ms).filter_map(arrived).collect(), q)
    }

    /// Arrivals at `provider` in ticks `from..to` (of `TICK_MS`).
    pub fn provider_requests_between_ticks(&self, provider: usize, from: usize, to: usize) -> u64 {
        let ticks = &self.per_tick[provider];
        ticks.get(from.min(ticks.len())..to.min(ticks.len())).map_or(0, |s| s.iter().map(|&n| n as u64).sum())
    }

    /// Arrivals at the primary in seconds `from_s..to_s`.
    pub fn requests_between(&self, from_s: u64, to_s: u64) -> u64 {
        let (a, b) = (from_s as usize, (to_s as usize).min(self.per_second.len()));
        self.per_second.get(a..b).map_or(0, |s| s.iter().map(|&n| n as u64).sum())
    }

    /// Most arrivals in one second, from second `from_s` on.
    pub fn peak_per_second_from(&self, from_s: u64) -> u32 {
        self.per_second.iter().skip(from_s as usize).copied().max().unwrap_or(0)
    }

    /// Most arrivals in one quota window, from the window holding `from_ms` on.
    pub fn peak_per_window_from(&self, from_ms: u64) -> Option<u32> {
        let w = self.window_ms?;
        Some(self.per_window.iter().skip((from_ms / w) as usize).copied().max().unwrap_or(0))
    }
}

/// Nearest rank.
fn quantile(mut sorted: Vec<u64>, q: f64) -> Option<u64> {
    sorted.sort_unstable();
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied()
}

fn bump(v: &mut Vec<u32>, i: usize) {
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    v[i] += 1;
}
