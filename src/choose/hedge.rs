//! Hedged requests: once an item's call has gone unanswered for longer than its provider usually
//! takes, one more call goes to the provider the routing would choose next, and the first
//! acceptable answer wins (Polly's hedging, gRPC's hedging policy, eRPC's hedge after the p95).
//! The delay is fixed, or the serving provider's p95 from the latency row the whole fleet shares,
//! clamped. A hedge needs what any call needs and waits for none of it: it is skipped.
use crate::choose::latency::{self, LatencyRow};
use serde::Serialize;

/// How long after a call its hedge is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HedgeDelay {
    Fixed {
        ms: u64,
    },
    /// The provider's recent p95 (the fleet's latency row), within `[min_ms, max_ms]`; `max_ms`
    /// while no call of the last half-lives was measured.
    P95 {
        min_ms: u64,
        max_ms: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Hedge {
    pub delay: HedgeDelay,
    /// Hedges per item at most (each one more call in flight).
    pub max_hedges: u32,
}

impl Hedge {
    /// The wait before hedging a call to a provider whose latency row is `row`, at `now`.
    pub fn delay_ms(&self, row: &LatencyRow, now: u64) -> u64 {
        match self.delay {
            HedgeDelay::Fixed { ms } => ms,
            HedgeDelay::P95 { min_ms, max_ms } => match latency::quantile_ms(row, now, 95) {
                Some((p95, weight)) if weight >= latency::SAMPLE => p95.clamp(min_ms, max_ms),
                _ => max_ms,
            },
        }
    }

    /// The delay reads the shared latency rows: every answered call's duration is recorded.
    pub fn reads_latency(&self) -> bool {
        matches!(self.delay, HedgeDelay::P95 { .. })
    }
}

/// A hedging chain's call, as its step says it: its number among the item's calls (its outcome
/// names it), whether it is a hedge, and when to ask for the next hedge if no answer came by then.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CallTag {
    pub call: u32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hedge: bool,
    /// `None`: no hedge follows this call (not safe to repeat, a probe, or the item's hedges
    /// are spent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hedge_after_ms: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(ms: &[u64]) -> LatencyRow {
        ms.iter().fold(LatencyRow::default(), |row, &m| latency::record(&row, m, 1_000))
    }

    #[test]
    fn a_fixed_delay_is_the_delay() {
        let h = Hedge { delay: HedgeDelay::Fixed { ms: 700 }, max_hedges: 1 };
        assert_eq!(h.delay_ms(&LatencyRow::default(), 0), 700);
        assert!(!h.reads_latency());
    }

    #[test]
    fn the_p95_delay_follows_the_fleets_latency_within_its_clamp() {
        let h = Hedge { delay: HedgeDelay::P95 { min_ms: 50, max_ms: 2_000 }, max_hedges: 1 };
        // Nothing measured yet: the ceiling, so a hedge never goes early on no evidence.
        assert_eq!(h.delay_ms(&LatencyRow::default(), 1_000), 2_000);
        let steady = fed(&[100; 100]);
        assert_eq!(h.delay_ms(&steady, 1_000), 111, "calls at 100 ms, read within their bucket (80..113 ms)");
        assert_eq!(h.delay_ms(&fed(&[5; 100]), 1_000), 50, "clamped up");
        assert_eq!(h.delay_ms(&fed(&[9_000; 100]), 1_000), 2_000, "clamped down");
        // A minute later the row has decayed to nothing: the ceiling again.
        assert_eq!(h.delay_ms(&steady, 61_000), 2_000);
    }
}
