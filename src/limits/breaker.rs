//! Provider health, one mechanism: the circuit breaker. Closed counts failures within a window;
//! open fails fast until `open_until`; half-open lets K probes through fleet-wide under leases.
//! K = 0 is seed 001's cooldown: after the window calls pass and one failure re-arms at once.
//! Pure functions over a row with a `version`: callers write back only when it changed.
use crate::limits::lease::{earliest_end, live, Lease};
use crate::verdict::outcome::Health;
use crate::verdict::reason::Reason;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    #[default]
    Closed,
    HalfOpen,
    Open,
}

impl Phase {
    /// Seed 002's gauge: 0 closed, 1 half-open, 2 open.
    pub fn gauge(self) -> u8 {
        match self {
            Phase::Closed => 0,
            Phase::HalfOpen => 1,
            Phase::Open => 2,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum TripRule {
    /// `threshold` failures in a row, none older than the window (seed 002: 5 within 60 s).
    Consecutive,
    /// Failure rate over the window, once `min_calls` calls were seen. Writes on every call.
    FailureRate { rate: f64, min_calls: u32 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakerPolicy {
    pub trip: TripRule,
    pub threshold: u32,
    pub window_ms: u64,
    pub open_ms: u64,
    pub open_growth: f64,
    pub open_max_ms: u64,
    /// The breaker opens for at most this long, and after a failed probe for this long (0: the
    /// growing open window instead), for the outage's first [`PROBE_STEADY_MS`]; after that the
    /// interval grows by `open_growth` per failed probe, to [`PROBE_INTERVAL_GROWTH_CAP`] times
    /// itself.
    #[serde(default)]
    pub probe_interval_ms: u64,
    pub half_open_probes: u32,
    pub successes_to_close: u32,
    pub probe_lease_ms: u64,
    /// When a live probe has its answer: its call's deadline. Items that find every probe taken
    /// come back then, not at the lease end (the lease only outlasts a holder that died).
    #[serde(default)]
    pub probe_answer_ms: u64,
}

/// How long failed probes keep the probe interval before it grows: a vendor back within minutes
/// is found within one interval of its recovery.
pub const PROBE_STEADY_MS: u64 = 300_000;
/// The most the probe interval grows to, in intervals: a provider down for hours is still found
/// within a few intervals of its recovery, at one call per interval for the whole fleet.
pub const PROBE_INTERVAL_GROWTH_CAP: u64 = 3;

impl BreakerPolicy {
    /// Open window after `streak` re-trips without a clean close: grows, capped. With a probe
    /// interval, the breaker opens for the interval (the open window, where shorter, the first
    /// time), growing only after [`PROBE_STEADY_MS`] of failed probes: recovery is found within
    /// about an interval, at the cost of one probe per interval for the fleet.
    pub fn open_window(&self, streak: u32) -> u64 {
        let every = self.probe_interval_ms;
        if let Some(steady) = PROBE_STEADY_MS.checked_div(every) {
            if streak == 0 {
                return self.open_ms.min(every);
            }
            let grown_by = u64::from(streak).saturating_sub(steady.max(1)).min(64) as i32;
            let grown = every as f64 * self.open_growth.powi(grown_by);
            return (grown as u64).clamp(every, every.saturating_mul(PROBE_INTERVAL_GROWTH_CAP));
        }
        let grown = self.open_ms as f64 * self.open_growth.powi(streak.min(64) as i32);
        (grown.min(self.open_max_ms as f64) as u64).max(self.open_ms.min(self.open_max_ms))
    }
}

/// One time bucket of the failure-rate window (a tenth of the window wide).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    pub start_ms: u64,
    pub calls: u32,
    pub failures: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct BreakerRow {
    pub phase: Phase,
    /// Consecutive rule: times of the current run of failures (at most `threshold`).
    pub failures: Vec<u64>,
    /// Failure-rate rule: buckets of calls and failures.
    pub buckets: Vec<Bucket>,
    pub open_until_ms: u64,
    /// Re-trips since the last clean close; drives the window growth.
    pub streak: u32,
    /// How many times it tripped, ever.
    pub trips: u64,
    pub probes: Vec<Lease>,
    pub successes: u32,
    pub last_failure: Option<String>,
    pub version: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transition {
    pub from: Phase,
    pub to: Phase,
    pub at_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Admission {
    Call,
    /// A half-open probe: this call holds a lease until `lease_until_ms`.
    Probe {
        lease_until_ms: u64,
    },
    Skip {
        until_ms: u64,
        reason: Reason,
    },
}

/// A decision plus the row to write back, `None` when nothing changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decided<T> {
    pub decision: T,
    pub row: Option<BreakerRow>,
    pub transition: Option<Transition>,
}

/// May a call go to this provider now? `holder` names the call, for its probe lease.
pub fn admit(row: &BreakerRow, p: &BreakerPolicy, now: u64, holder: &str) -> Decided<Admission> {
    let mut next = row.clone();
    let mut transition = None;
    if row.phase == Phase::Open {
        if now < row.open_until_ms {
            let reason = if p.half_open_probes == 0 { Reason::Cooldown } else { Reason::CircuitOpen };
            return unchanged(Admission::Skip { until_ms: row.open_until_ms, reason });
        }
        next.phase = Phase::HalfOpen;
        next.successes = 0;
        next.probes.clear();
        transition = Some(Transition { from: Phase::Open, to: Phase::HalfOpen, at_ms: now });
    }
    let decision = match next.phase {
        Phase::Closed => Admission::Call,
        Phase::HalfOpen if p.half_open_probes == 0 => Admission::Call,
        Phase::HalfOpen | Phase::Open => {
            next.probes = live(&next.probes, now);
            if next.probes.len() as u32 >= p.half_open_probes {
                // Others hold every probe: come back when the first probe has its answer, or,
                // past that (its holder died or hangs), when its lease ends.
                return unchanged(Admission::Skip {
                    until_ms: busy_until(&next.probes, p, now),
                    reason: Reason::HalfOpenBusy,
                });
            }
            let lease_until_ms = now.saturating_add(p.probe_lease_ms);
            next.probes.push(Lease { holder: holder.to_string(), until_ms: lease_until_ms });
            Admission::Probe { lease_until_ms }
        }
    };
    finish(row, next, decision, transition)
}

/// The skip of a provider whose threshold this execution spent on failures before a first
/// success (Item Concurrency *Auto*): those failures open the breaker, so the skip says what an
/// open breaker says, until its open window ends — whether or not the row read still shows it
/// closed (the last failure's write may land after the items in line poll again).
pub fn spent_skip(row: &BreakerRow, p: &BreakerPolicy, now: u64) -> (Reason, u64) {
    let reason = if p.half_open_probes == 0 { Reason::Cooldown } else { Reason::CircuitOpen };
    let until = if row.phase == Phase::Open && row.open_until_ms > now {
        row.open_until_ms
    } else {
        now.saturating_add(p.open_window(row.streak))
    };
    (reason, until)
}

/// The earliest time a taken probe slot may have freed: its call's answer, else its lease end.
fn busy_until(probes: &[Lease], p: &BreakerPolicy, now: u64) -> u64 {
    let answer_at = |l: &Lease| {
        let at = l.until_ms.saturating_sub(p.probe_lease_ms).saturating_add(p.probe_answer_ms);
        if p.probe_answer_ms > 0 && at > now && at < l.until_ms {
            at
        } else {
            l.until_ms
        }
    };
    probes.iter().map(answer_at).min().unwrap_or_else(|| earliest_end(probes))
}

/// Record what a call's outcome says about the provider's health.
pub fn record(row: &BreakerRow, p: &BreakerPolicy, now: u64, health: Health, holder: &str, label: &str) -> Decided<()> {
    let mut next = row.clone();
    let held = next.probes.iter().any(|l| l.holder == holder);
    next.probes.retain(|l| l.holder != holder);
    let mut transition = None;
    match (row.phase, health) {
        (_, Health::Neutral) => {}
        // A late answer to a call admitted before the trip says nothing new.
        (Phase::Open, _) => {}
        (Phase::Closed, Health::Success) => match p.trip {
            TripRule::Consecutive => next.failures.clear(),
            TripRule::FailureRate { .. } => add_call(&mut next.buckets, p, now, false),
        },
        (Phase::Closed, Health::Failure) => {
            next.last_failure = Some(label.to_string());
            let tripped = match p.trip {
                TripRule::Consecutive => {
                    next.failures.retain(|&t| now.saturating_sub(t) < p.window_ms);
                    next.failures.push(now);
                    let keep = p.threshold.max(1) as usize;
                    if next.failures.len() > keep {
                        next.failures.drain(..next.failures.len() - keep);
                    }
                    next.failures.len() >= keep
                }
                TripRule::FailureRate { rate, min_calls } => {
                    add_call(&mut next.buckets, p, now, true);
                    let (calls, failures) =
                        next.buckets.iter().fold((0u64, 0u64), |(c, f), b| (c + b.calls as u64, f + b.failures as u64));
                    calls >= min_calls as u64 && failures as f64 >= rate * calls as f64
                }
            };
            if tripped {
                transition = Some(open(&mut next, p, now, Phase::Closed));
            }
        }
        (Phase::HalfOpen, Health::Success) => {
            if held || p.half_open_probes == 0 {
                next.successes = next.successes.saturating_add(1);
                if next.successes >= p.successes_to_close.max(1) {
                    next = BreakerRow { trips: row.trips, version: row.version, ..Default::default() };
                    transition = Some(Transition { from: Phase::HalfOpen, to: Phase::Closed, at_ms: now });
                }
            }
        }
        (Phase::HalfOpen, Health::Failure) => {
            next.last_failure = Some(label.to_string());
            next.streak = next.streak.saturating_add(1);
            transition = Some(open(&mut next, p, now, Phase::HalfOpen));
        }
    }
    finish(row, next, (), transition)
}

fn open(next: &mut BreakerRow, p: &BreakerPolicy, now: u64, from: Phase) -> Transition {
    next.phase = Phase::Open;
    next.open_until_ms = now.saturating_add(p.open_window(next.streak));
    next.trips = next.trips.saturating_add(1);
    next.failures.clear();
    next.buckets.clear();
    next.probes.clear();
    next.successes = 0;
    Transition { from, to: Phase::Open, at_ms: now }
}

fn add_call(buckets: &mut Vec<Bucket>, p: &BreakerPolicy, now: u64, failed: bool) {
    let width = (p.window_ms / 10).max(1);
    let start = now - now % width;
    // Saturating: a stored bucket start near the end of u64 must not overflow the window.
    buckets.retain(|b| b.start_ms.saturating_add(p.window_ms) > now);
    match buckets.last_mut() {
        Some(b) if b.start_ms == start => {
            b.calls = b.calls.saturating_add(1);
            b.failures = b.failures.saturating_add(failed as u32);
        }
        _ => buckets.push(Bucket { start_ms: start, calls: 1, failures: failed as u32 }),
    }
}

fn unchanged<T>(decision: T) -> Decided<T> {
    Decided { decision, row: None, transition: None }
}

/// `version` rises by exactly one when, and only when, the row changed.
fn finish<T>(old: &BreakerRow, mut next: BreakerRow, decision: T, transition: Option<Transition>) -> Decided<T> {
    next.version = old.version;
    if next == *old {
        return Decided { decision, row: None, transition: None };
    }
    next.version = old.version.wrapping_add(1);
    Decided { decision, row: Some(next), transition }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_probe_reopens_for_the_probe_interval_which_grows_only_after_five_minutes() {
        let p = BreakerPolicy { probe_interval_ms: 10_000, ..Default::default() };
        assert_eq!(p.open_window(0), 10_000, "the first trip: the interval, as the open window is longer");
        assert_eq!(p.open_window(1), 10_000);
        assert_eq!(p.open_window(30), 10_000, "30 failed probes: 5 minutes at one per 10 s");
        assert_eq!(p.open_window(31), 20_000);
        assert_eq!(p.open_window(32), 30_000, "three intervals at most");
        assert_eq!(p.open_window(u32::MAX), 30_000);
        let shorter = BreakerPolicy { open_ms: 4_000, ..p.clone() };
        assert_eq!(shorter.open_window(0), 4_000);
        // Without one, the open window as before: 30 s doubled per failed probe, to 10 minutes.
        let before = BreakerPolicy { probe_interval_ms: 0, ..p };
        assert_eq!((before.open_window(0), before.open_window(1), before.open_window(9)), (30_000, 60_000, 600_000));
    }
}
