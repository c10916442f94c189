//! The shared rate gate of a provider: a soft limit below the vendor's quota, exact with O(1)
//! state (GCRA: one "theoretical arrival time" plus a burst), and a closure set by a 429 or a
//! long Retry-After that holds every worker back until the hinted time. Kept apart from the
//! breaker row so ordinary calls do not contend on it.
use crate::verdict::reason::Reason;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateLimit {
    pub requests: u32,
    pub period_ms: u64,
    #[serde(default = "one")]
    pub burst: u32,
}

fn one() -> u32 {
    1
}

impl RateLimit {
    /// Emission interval in microseconds (µs so 1000+/s limits stay exact).
    fn interval_us(&self) -> u64 {
        (self.period_ms.saturating_mul(1000) / self.requests.max(1) as u64).max(1)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct GateRow {
    /// GCRA theoretical arrival time, µs since the epoch.
    pub tat_us: u64,
    /// No call before this time (set by a 429 or a hint above the cap).
    pub closed_until_ms: u64,
    pub version: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Take {
    /// A slot now; `row` is the new state to write (`None`: no limit, nothing to write).
    Now { row: Option<GateRow> },
    /// A slot reserved at `at_ms` (within `max_wait_ms`): sleep until then and call. Reserving,
    /// rather than retrying, gives every waiter its own slot so they do not wake together.
    Reserved { at_ms: u64, row: GateRow },
    /// No slot within reach: skip this provider until `until_ms`.
    Wait { until_ms: u64, reason: Reason },
}

pub fn take(row: &GateRow, limit: Option<&RateLimit>, now_ms: u64, max_wait_ms: u64) -> Take {
    if now_ms < row.closed_until_ms {
        return Take::Wait { until_ms: row.closed_until_ms, reason: Reason::RateLimited };
    }
    let Some(limit) = limit else { return Take::Now { row: None } };
    let now_us = now_ms.saturating_mul(1000);
    let t = limit.interval_us();
    let tolerance = t.saturating_mul(limit.burst.max(1) as u64 - 1);
    let start = row.tat_us.max(now_us);
    let allowed_at_us = start.saturating_sub(tolerance);
    // Saturating: a clock or stored tat near the end of u64 must not wrap the gate open.
    let next = GateRow {
        tat_us: start.saturating_add(t),
        closed_until_ms: row.closed_until_ms,
        version: row.version.wrapping_add(1),
    };
    if allowed_at_us <= now_us {
        return Take::Now { row: Some(next) };
    }
    let at_ms = allowed_at_us.div_ceil(1000);
    if at_ms - now_ms <= max_wait_ms {
        Take::Reserved { at_ms, row: next }
    } else {
        Take::Wait { until_ms: at_ms, reason: Reason::RateLimited }
    }
}

/// Whether a call woken at `now_ms` for the slot it reserved at `at_ms` is still on time: within
/// one interval of it. Later (a process stalled on its CPU), the slot is taken anew: the calls of
/// a stalled process would otherwise go out together, late, into the vendor's next window.
pub fn on_time(limit: Option<&RateLimit>, at_ms: u64, now_ms: u64) -> bool {
    limit.is_none_or(|l| now_ms.saturating_sub(at_ms).saturating_mul(1000) <= l.interval_us())
}

/// A reserved slot its item did not take (it moved on, or was deferred): one interval back off
/// the theoretical arrival time, never before now, so the next caller may have it; `None` where
/// nothing is left to give back (the time has caught up with it).
pub fn give_back(row: &GateRow, limit: Option<&RateLimit>, now_ms: u64) -> Option<GateRow> {
    let limit = limit?;
    let now_us = now_ms.saturating_mul(1000);
    (row.tat_us > now_us).then(|| GateRow {
        tat_us: row.tat_us.saturating_sub(limit.interval_us()).max(now_us),
        version: row.version.wrapping_add(1),
        ..row.clone()
    })
}

/// Close the gate for every worker until `until_ms`; `None` if it already was.
pub fn close(row: &GateRow, until_ms: u64) -> Option<GateRow> {
    (until_ms > row.closed_until_ms).then(|| GateRow {
        closed_until_ms: until_ms,
        version: row.version.wrapping_add(1),
        ..row.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_given_back_goes_to_the_next_caller() {
        let limit = RateLimit { requests: 1, period_ms: 1_000, burst: 1 };
        let mut row = GateRow::default();
        let Take::Now { row: Some(r) } = take(&row, Some(&limit), 0, 0) else { panic!() };
        row = r;
        let Take::Reserved { at_ms: 1_000, row: r } = take(&row, Some(&limit), 10, 5_000) else { panic!() };
        row = r;
        // Its holder left it: the next caller gets 1 000 ms, not 2 000 ms.
        let back = give_back(&row, Some(&limit), 1_000).unwrap();
        assert!(matches!(take(&back, Some(&limit), 1_000, 0), Take::Now { .. }));
        assert!(matches!(take(&row, Some(&limit), 1_000, 5_000), Take::Reserved { at_ms: 2_000, .. }), "kept: later");
        assert_eq!(give_back(&GateRow::default(), Some(&limit), 5), None, "nothing reserved");
    }

    #[test]
    fn gcra_is_exact_with_burst() {
        // 80% of seed 003's 100/min: 80 per minute, one every 750 ms, burst 2.
        let limit = RateLimit { requests: 80, period_ms: 60_000, burst: 2 };
        let mut row = GateRow::default();
        let mut granted = Vec::new();
        for now in (0..60_000).step_by(50) {
            if let Take::Now { row: Some(r) } = take(&row, Some(&limit), now, 0) {
                row = r;
                granted.push(now);
            }
        }
        assert_eq!(granted.len(), 81, "80 per minute plus the burst of 1 extra at the start");
        assert_eq!(&granted[..3], &[0, 50, 750], "burst of two (one per poll here), then the interval");
    }

    #[test]
    fn waiters_reserve_distinct_slots() {
        let limit = RateLimit { requests: 10, period_ms: 1000, burst: 1 };
        let mut row = GateRow::default();
        let mut slots = Vec::new();
        for _ in 0..5 {
            match take(&row, Some(&limit), 0, 10_000) {
                Take::Now { row: Some(r) } => {
                    slots.push(0);
                    row = r;
                }
                Take::Reserved { at_ms, row: r } => {
                    slots.push(at_ms);
                    row = r;
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(slots, [0, 100, 200, 300, 400]);
    }

    #[test]
    fn a_closed_gate_holds_everyone_until_the_hint() {
        let row = close(&GateRow::default(), 3_600_000).unwrap();
        assert_eq!(take(&row, None, 1000, 60_000), Take::Wait { until_ms: 3_600_000, reason: Reason::RateLimited });
        assert_eq!(take(&row, None, 3_600_000, 0), Take::Now { row: None });
        assert_eq!(close(&row, 10), None, "an earlier closure never shortens a later one");
    }
}
