//! What a provider's rows say at `now`, for *Get Provider State* and dashboards: seed 002's
//! gauge (0 closed, 1 half-open, 2 open) and the live probes, gate closure and in-flight calls.
//! Read-only: nothing here changes a row.
use crate::choose::chain::ProviderView;
use crate::choose::latency::estimate;
use crate::limits::breaker::Phase;
use crate::limits::lease::live;
use crate::limits::token_limit::{self, TokenRules};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderState {
    /// The phase a call would meet now: an open breaker whose window has ended is half-open.
    pub state: Phase,
    pub state_gauge: u8,
    pub open_until_ms: Option<u64>,
    pub trips: u64,
    pub recent_failures: usize,
    pub last_failure: Option<String>,
    pub probes_in_flight: usize,
    pub gate_closed_until_ms: Option<u64>,
    pub in_flight: usize,
    /// Recent median and p95 of answered calls (latency routing records them; else none).
    pub latency_p50_ms: Option<u64>,
    pub latency_p95_ms: Option<u64>,
    /// The same for streamed calls' time to their first committing chunk.
    pub first_chunk_p50_ms: Option<u64>,
    pub first_chunk_p95_ms: Option<u64>,
    /// The window Item Concurrency Auto learned for the fleet (a fresh row only), and when it
    /// last met congestion.
    pub concurrency: Option<u32>,
    pub concurrency_congested_at_ms: Option<u64>,
    /// The slots of that limit the workers and guarded calls hold now (the fleet's learned
    /// limit): the calls in flight across the fleet are at most this.
    pub concurrency_in_flight: u32,
    /// The workers waiting at that limit now, by their calls' priority (`limits::priority`).
    pub waiting: crate::limits::priority::Waiting,
    /// The fair-share keys holding the most of that limit now (`limits::fair_share`).
    pub heaviest_keys: Vec<crate::limits::fair_share::KeyLoad>,
    /// Tokens counted in the last minute (`token_limit`: reserved, then settled at usage), and
    /// what is left of the provider's tokens per minute (none when it sets none).
    pub tokens_last_minute: u64,
    pub tokens_left_minute: Option<u64>,
    /// What is left of its input and output tokens per minute, where it limits them apart.
    pub input_tokens_left_minute: Option<u64>,
    pub output_tokens_left_minute: Option<u64>,
    /// Spent in the current period (a UTC day or month), in millionths of the prices' unit; what
    /// is left of the cap (none when it sets none) and when the period ends.
    pub spent_period_micros: u64,
    pub spend_left_period_micros: Option<u64>,
    pub period_ends_ms: Option<u64>,
}

/// [`inspect`] with what is left of the provider's token limits: of `rules` where given, else of
/// the limits its row was last written under (a Get Provider State sets none: the calls did).
pub fn inspect_with(view: &ProviderView, now_ms: u64, rules: Option<&TokenRules>) -> ProviderState {
    let mut s = inspect(view, now_ms);
    if let Some(r) = rules.map(|r| &r.limits).or(view.tokens.limits.as_ref()) {
        let left = token_limit::left(&view.tokens, r, now_ms);
        s.tokens_left_minute = left.tokens;
        s.input_tokens_left_minute = left.input_tokens;
        s.output_tokens_left_minute = left.output_tokens;
        s.spent_period_micros = r.spent(&view.tokens, now_ms);
        s.spend_left_period_micros = left.spend_micros;
        s.period_ends_ms = Some(r.period(now_ms).1);
    }
    s
}

pub fn inspect(view: &ProviderView, now_ms: u64) -> ProviderState {
    let b = &view.breaker;
    let latency = estimate(&view.latency, now_ms);
    let first_chunk = estimate(&view.latency.first_chunk(), now_ms);
    let learned = crate::limits::learned_limit::advice(&view.limit, now_ms);
    let state = match b.phase {
        Phase::Open if now_ms >= b.open_until_ms => Phase::HalfOpen,
        phase => phase,
    };
    ProviderState {
        state,
        state_gauge: state.gauge(),
        open_until_ms: (state == Phase::Open).then_some(b.open_until_ms),
        trips: b.trips,
        recent_failures: b.failures.len(),
        last_failure: b.last_failure.clone(),
        probes_in_flight: live(&b.probes, now_ms).len(),
        gate_closed_until_ms: (view.gate.closed_until_ms > now_ms).then_some(view.gate.closed_until_ms),
        in_flight: live(&view.in_flight.leases, now_ms).len(),
        latency_p50_ms: latency.map(|e| e.p50_ms),
        latency_p95_ms: latency.map(|e| e.p95_ms),
        first_chunk_p50_ms: first_chunk.map(|e| e.p50_ms),
        first_chunk_p95_ms: first_chunk.map(|e| e.p95_ms),
        concurrency: learned.map(|a| a.limit),
        concurrency_congested_at_ms: learned.map(|a| a.congested_at_ms).filter(|&t| t > 0),
        concurrency_in_flight: crate::limits::fleet_limit::held(&view.limit, now_ms),
        waiting: crate::limits::priority::waiting(&view.limit, now_ms),
        heaviest_keys: crate::limits::fair_share::heaviest(&view.limit, now_ms),
        tokens_last_minute: crate::limits::token_budget::used(&view.tokens.buckets, now_ms),
        tokens_left_minute: None,
        input_tokens_left_minute: None,
        output_tokens_left_minute: None,
        spent_period_micros: 0,
        spend_left_period_micros: None,
        period_ends_ms: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::breaker::BreakerRow;
    use crate::limits::lease::Lease;

    #[test]
    fn an_open_breaker_reads_half_open_once_its_window_ends() {
        let v = ProviderView {
            breaker: BreakerRow { phase: Phase::Open, open_until_ms: 1_000, trips: 1, ..Default::default() },
            ..Default::default()
        };
        assert_eq!((inspect(&v, 999).state_gauge, inspect(&v, 999).open_until_ms), (2, Some(1_000)));
        assert_eq!((inspect(&v, 1_000).state, inspect(&v, 1_000).open_until_ms), (Phase::HalfOpen, None));
        assert_eq!(inspect(&ProviderView::default(), 5).state_gauge, 0);
    }

    #[test]
    fn only_live_leases_and_a_gate_still_closed_count() {
        let mut v = ProviderView::default();
        v.breaker.probes = vec![Lease { holder: "a".into(), until_ms: 10 }, Lease { holder: "b".into(), until_ms: 20 }];
        v.in_flight.leases = vec![Lease { holder: "c".into(), until_ms: 15 }];
        v.gate.closed_until_ms = 12;
        let s = inspect(&v, 12);
        assert_eq!((s.probes_in_flight, s.in_flight, s.gate_closed_until_ms), (1, 1, None));
        assert_eq!(inspect(&v, 11).gate_closed_until_ms, Some(12));
    }
}
