//! Item Concurrency *Auto*: how many of one execution's calls a provider takes at once, learned
//! from how it answers (TCP's slow start and AIMD, with the gradient of Netflix's
//! concurrency-limits and Envoy's adaptive concurrency on the time to the first byte).
//!
//! - Before the provider's first success at most `threshold` calls are admitted that did not come
//!   back neutral: a dead provider costs exactly the breaker's threshold, whatever the timing of
//!   its failures. Once they are spent and none is out, the window refuses (nothing will free it):
//!   the item moves on or is deferred as for a closed gate.
//! - The one congestion rule of [`crate::limits::congestion`], per served call (a round's growth
//!   spread over its calls): slow start quadruples it per round trip; a 429, a 503 with a hint or a
//!   timeout cuts it once per round (to half the first time, to 0.7 after); after a cut a round
//!   goes half the way back to where it met congestion, an eighth of a call per round there.
//! - Its own gradient: a time to first byte far above the provider's own recent baseline (the
//!   answer's length varies, its first byte much less) ends slow start with the half cut, and
//!   after it takes about one call per round. It sets no plateau (it is as often this process's
//!   own load as the vendor's queue), so growth after it is a call a round.
//! - The ceiling is Max Item Concurrency, and Max In Flight where the provider sets one.
//!
//! Sans-IO: the window counts calls admitted and released; the caller says when (the item
//! machine, at a call's hand-out and its outcome).
use crate::limits::congestion;
use crate::limits::learned_limit::{Advice, WindowNews};
use crate::verdict::outcome::{Classification, Health, Verdict};

/// Whether a call may go to the provider now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Admitted: the call holds a slot until its outcome; `round` is the window's round then.
    Go { round: u32 },
    /// The window is full: wait for a slot to free.
    Wait,
    /// Spent before a first success, nothing out: no slot will free. Move on.
    Refuse,
}

/// What an outcome says about the provider's capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Signal {
    /// Served; `first_byte_ms`: the time to its first byte (streamed: first chunk), if known.
    Served { first_byte_ms: Option<u64> },
    /// Too much at once: a 429, a 503 with a hint, our deadline. `failure`: it also counts
    /// against the provider's health (a timeout, a hinted 503; a 429 only where configured).
    Congested { failure: bool },
    /// Failed, but not for load (a 500, a reset): counts before a first success.
    Failed,
    /// Says nothing (a 404, a closed hedge's loser).
    Neutral,
}

impl Signal {
    /// What the classifier's reading of an outcome says about load. `timed_out`: our deadline.
    pub fn of(c: &Classification, timed_out: bool, first_byte_ms: Option<u64>) -> Signal {
        if c.health == Health::Success {
            return Signal::Served { first_byte_ms };
        }
        let congested = c.closes_gate || timed_out || (c.hint.is_some() && c.verdict == Verdict::Retry);
        match (congested, c.health) {
            (true, health) => Signal::Congested { failure: health == Health::Failure },
            (false, Health::Failure) => Signal::Failed,
            _ => Signal::Neutral,
        }
    }
}

/// The gradient's tolerance: a first byte this many times the baseline reads as congestion.
pub const GRADIENT_TOLERANCE: f64 = 1.5;
/// In slow start the gradient reads congestion only once the first byte doubled: a vendor that
/// queues then holds twice the calls it serves at once, so the cut to half lands on its capacity;
/// below that, this process's own load (its answers wait to be read while it sends a quadrupled
/// round) reads as the vendor's and ended slow start far below a healthy vendor's capacity.
pub const SLOW_START_TOLERANCE: f64 = 2.0;
/// The gradient's tolerance in slow start or after it.
pub fn tolerance(slow_start: bool) -> f64 {
    if slow_start {
        SLOW_START_TOLERANCE
    } else {
        GRADIENT_TOLERANCE
    }
}

/// How much of each new first-byte time the short-term average takes.
const RECENT_WEIGHT: f64 = 0.2;
/// How fast the baseline (the lowest recent first byte) drifts up towards what is seen, per
/// window of answers, so a provider that got slower for good sets a new baseline instead of
/// reading as congested forever (per answer it would outrun a wide window's queueing).
const BASELINE_DRIFT: f64 = 0.01;
/// Samples before the gradient is trusted.
const GRADIENT_MIN_SAMPLES: u32 = 5;

#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    limit: f64,
    /// Growing by one per success (doubling per round trip) until the first congestion.
    slow_start: bool,
    /// The window when it last met congestion.
    congested_at: f64,
    ceiling: u32,
    threshold: u32,
    in_flight: u32,
    served: bool,
    /// Calls admitted before the first success that came back failed or congested.
    spent_unserved: u32,
    /// Of those, the ones that counted against the provider's health (its breaker's failures).
    failed_unserved: u32,
    /// Bumped at each decrease (its count of cuts).
    pub(crate) round: u32,
    /// What an admitted call carries: bumped at each cut and when slow start's gradient first
    /// reads a queued first byte (a call sent after it confirms or clears it).
    epoch: u32,
    /// The epoch after the last cut: an outcome of a call admitted before it is not congestion again.
    cut_epoch: u32,
    /// Slow start holds from this epoch on ([`late_first_byte`]).
    held_from: Option<u64>,
    trend: FirstByteTrend,
    /// The fleet's last congestion this window heard of (its time on the store's clock).
    heard_ms: u64,
}

impl Window {
    /// `threshold`: the provider's breaker threshold (the window's start, and the calls a
    /// provider gets before its first success); `ceiling`: Max Item Concurrency, or Max In Flight.
    pub fn new(threshold: u32, ceiling: u32) -> Window {
        let ceiling = ceiling.max(1);
        Window {
            limit: f64::from(threshold.clamp(1, ceiling)),
            slow_start: true,
            congested_at: f64::INFINITY,
            ceiling,
            threshold: threshold.max(1),
            in_flight: 0,
            served: false,
            spent_unserved: 0,
            failed_unserved: 0,
            round: 0,
            epoch: 0,
            cut_epoch: 0,
            held_from: None,
            trend: FirstByteTrend::default(),
            heard_ms: 0,
        }
    }

    /// The fleet's learned limit, read at a poll: a congestion heard for the first time lowers
    /// the window to the limit it left (one 429 anywhere slows every execution); a window that has
    /// served starts from what the fleet learned instead of slow-starting from its threshold.
    /// Before its first success the window still admits at most the threshold (`room`).
    pub fn share(&mut self, fleet: Advice) {
        let fleet_limit = f64::from(fleet.limit).min(f64::from(self.ceiling)).max(1.0);
        if fleet.congested_at_ms > self.heard_ms {
            self.heard_ms = fleet.congested_at_ms;
            // Growth slows near the limit the fleet was cut to (the plateau).
            self.congested_at = self.congested_at.min(fleet_limit);
            if fleet_limit < self.limit {
                self.limit = fleet_limit;
                self.slow_start = false;
                // Calls already out were sent at the old size: their congestion is old news.
                self.new_cut();
            }
        }
        if self.served && self.slow_start && fleet_limit > self.limit {
            self.limit = fleet_limit;
            // Where the fleet met congestion, grow additively from there.
            self.slow_start = fleet.congested_at_ms == 0;
        }
    }

    /// What the window's last outcome taught, for the fleet's row.
    pub(crate) fn news(&self, cut: bool) -> WindowNews {
        WindowNews { limit: self.limit(), congested: cut, served: self.served }
    }

    /// The calls it takes at once now (whole).
    pub fn limit(&self) -> u32 {
        self.limit as u32
    }

    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Spent before a first success with nothing out: no slot will free.
    pub fn refuses(&self) -> bool {
        !self.served && self.in_flight == 0 && self.spent_unserved >= self.threshold
    }

    /// Why it refuses: its spent calls failed (the breaker opened on them: `true`), or only met
    /// congestion that says nothing of the provider's health (429s: its rate gate closed).
    pub fn refused_for_failures(&self) -> bool {
        self.failed_unserved > 0
    }

    /// How many more calls it would admit now.
    pub fn room(&self) -> u32 {
        let room = self.limit().saturating_sub(self.in_flight);
        if self.served {
            return room;
        }
        room.min(self.threshold.saturating_sub(self.spent_unserved + self.in_flight))
    }

    /// Whether one more call may go now; admitted, it holds a slot until [`Window::release`].
    pub fn admit(&mut self) -> Admit {
        if self.refuses() {
            return Admit::Refuse;
        }
        if self.room() == 0 {
            return Admit::Wait;
        }
        self.in_flight += 1;
        Admit::Go { round: self.epoch }
    }

    /// A call admitted in `round` ended with `signal`.
    pub fn release(&mut self, round: u32, signal: Signal) {
        self.in_flight = self.in_flight.saturating_sub(1);
        match signal {
            Signal::Served { first_byte_ms } => {
                self.served = true;
                let ms = first_byte_ms.map(|ms| ms as f64);
                let slower = ms.is_some_and(|ms| self.trend.slower(ms, self.limit, tolerance(self.slow_start)));
                let queued = if self.slow_start {
                    let (sent, next) = (u64::from(round), u64::from(self.epoch + 1));
                    let (held, queue) = late_first_byte(self.held_from, sent, self.trend.first_byte(ms), next);
                    if held.is_some() && self.held_from.is_none() {
                        // Calls sent from now on carry the epoch that decides.
                        self.epoch += 1;
                    }
                    self.held_from = held;
                    if held.is_some() {
                        return;
                    }
                    queue
                } else {
                    slower
                };
                let ceiling = f64::from(self.ceiling);
                if queued && self.slow_start {
                    // Slow start overshot: the vendor queues, or this process does (its answers'
                    // times grow with its own load: it cannot tell). Back to the half, with no
                    // plateau: then a call a round.
                    let plateau = self.congested_at;
                    self.decrease(round);
                    self.congested_at = plateau;
                } else if queued {
                    // About one less per window while the first byte stays slow (Vegas-like).
                    self.limit = (self.limit - 1.0 / self.limit).max(1.0);
                } else {
                    // The one rule's growth, a round's spread over its calls.
                    self.limit = (self.limit + congestion::growth_per_call(self.limit, self.plateau())).min(ceiling);
                }
            }
            Signal::Congested { failure } => {
                if !self.served {
                    self.spent_unserved += 1;
                    self.failed_unserved += u32::from(failure);
                }
                self.decrease(round);
            }
            Signal::Failed => {
                if !self.served {
                    self.spent_unserved += 1;
                    self.failed_unserved += 1;
                }
            }
            Signal::Neutral => {}
        }
    }

    /// Multiplicative decrease, once per round: the calls already out when the window shrank
    /// were sent at the old size, so their congestion is the same news.
    fn decrease(&mut self, round: u32) {
        if round < self.cut_epoch {
            return;
        }
        self.new_cut();
        self.congested_at = self.limit;
        self.limit = congestion::cut(self.limit, self.slow_start);
        self.slow_start = false;
    }

    /// Where it last met congestion, for the rule's growth (`None` in slow start; infinite where
    /// it met none: a cut by its gradient alone, a fleet's limit learned without congestion).
    fn plateau(&self) -> Option<f64> {
        (!self.slow_start).then_some(self.congested_at)
    }

    /// A cut: the calls already out were sent at the old size.
    fn new_cut(&mut self) {
        self.round += 1;
        self.epoch += 1;
        self.cut_epoch = self.epoch;
    }
}

/// Slow start's rule for a late first byte (past twice the baseline), the one a window (`mark`:
/// its epochs) and the fleet's row (the store's clock) keep. n8n's process stalls now and then
/// under a thousand answers, and every call out during a stall reads late: ending slow start on it
/// left a healthy vendor's first run at 179 at once. So the first late one only holds growth from
/// `mark` on (`held`: since when, or `None`); a call sent at or after it decides by its own first
/// byte: late too, the vendor queues (`true`: the half cut); read on time, it was a stall and the
/// hold is lifted.
pub fn late_first_byte(held: Option<u64>, sent: u64, first: FirstByte, mark: u64) -> (Option<u64>, bool) {
    match held {
        None if first.slow => (Some(mark), false),
        Some(from) if sent >= from && first.slow => (None, true),
        Some(from) if sent >= from && first.read => (None, false),
        held => (held, false),
    }
}

/// What a call's end told a seat of the provider's queue (the fleet's row reads it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FirstByte {
    /// Served, its first byte read against a baseline of enough samples (a seat that cannot
    /// tell yet neither raises nor lifts a suspicion).
    pub read: bool,
    /// Its first byte past slow start's tolerance of the provider's baseline.
    pub slow: bool,
}

/// The gradient of a provider's time to first byte: a short-term average against the lowest
/// recent one (the baseline), which drifts up slowly so a provider that got slower for good sets
/// a new baseline instead of reading as congested forever.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FirstByteTrend {
    baseline_ms: Option<f64>,
    recent_ms: Option<f64>,
    samples: u32,
}

impl FirstByteTrend {
    /// Whether this one first byte (already read) is past slow start's tolerance of the baseline.
    pub fn past(&self, ms: f64) -> bool {
        self.trusted() && self.baseline_ms.is_some_and(|b| ms > SLOW_START_TOLERANCE * b)
    }

    /// Enough samples for the baseline to say anything.
    pub fn trusted(&self) -> bool {
        self.samples >= GRADIENT_MIN_SAMPLES
    }

    /// What this first byte (already read by [`FirstByteTrend::slower`]) says to slow start.
    pub fn first_byte(&self, ms: Option<f64>) -> FirstByte {
        FirstByte { read: ms.is_some() && self.trusted(), slow: ms.is_some_and(|ms| self.past(ms)) }
    }

    /// Is this first byte far above the baseline? `calls`: the calls at once it was measured at
    /// (the drift is per window of answers: per answer it would outrun a wide window's queueing).
    pub fn slower(&mut self, ms: f64, calls: f64, tolerance: f64) -> bool {
        let ms = ms.max(1.0);
        self.samples += 1;
        let recent = self.recent_ms.map_or(ms, |r| r + RECENT_WEIGHT * (ms - r));
        self.recent_ms = Some(recent);
        let drift = BASELINE_DRIFT / calls.max(1.0);
        let baseline = self.baseline_ms.map_or(ms, |b| (b + drift * (recent - b)).min(ms).max(1.0));
        self.baseline_ms = Some(baseline);
        self.samples >= GRADIENT_MIN_SAMPLES && recent > tolerance * baseline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(ms: u64) -> Signal {
        Signal::Served { first_byte_ms: Some(ms) }
    }

    fn take(w: &mut Window) -> u32 {
        match w.admit() {
            Admit::Go { round } => round,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_dead_provider_gets_exactly_the_threshold_whatever_the_timing_of_its_failures() {
        for order in 0..3 {
            let mut w = Window::new(5, 256);
            let mut out: Vec<u32> = (0..5).map(|_| take(&mut w)).collect();
            assert_eq!(w.admit(), Admit::Wait, "five out: the sixth waits");
            // Failures come back in some order, each freeing nothing for a new call.
            while !out.is_empty() {
                let r = if order == 0 { out.pop().unwrap() } else { out.remove(0) };
                w.release(r, Signal::Failed);
                if out.is_empty() {
                    assert!(w.refuses(), "spent, nothing out: every waiter moves on");
                } else {
                    assert_eq!(w.admit(), Admit::Wait);
                }
            }
            assert_eq!(w.admit(), Admit::Refuse);
        }
    }

    #[test]
    fn neutral_answers_before_a_success_spend_nothing() {
        let mut w = Window::new(2, 256);
        let r = take(&mut w);
        w.release(r, Signal::Neutral);
        let r = take(&mut w);
        w.release(r, Signal::Neutral);
        assert!(matches!(w.admit(), Admit::Go { .. }));
    }

    #[test]
    fn slow_start_quadruples_per_round_trip_then_a_round_goes_half_way_back_to_the_plateau() {
        let mut w = Window::new(5, 2000);
        for round_trip in 0..4 {
            let n = w.limit();
            let rounds: Vec<u32> = (0..n).map(|_| take(&mut w)).collect();
            assert_eq!(w.admit(), Admit::Wait);
            for r in rounds {
                w.release(r, served(100));
            }
            assert_eq!(w.limit(), 4 * n, "round trip {round_trip}");
        }
        assert_eq!(w.limit(), 1280);
        let r = take(&mut w);
        w.release(r, Signal::Congested { failure: false });
        assert_eq!(w.limit(), 640, "halved");
        for _ in 0..640 {
            let r = take(&mut w);
            w.release(r, served(100));
        }
        let after_a_round = w.limit();
        assert!((840..=960).contains(&after_a_round), "about half the way back in a round: {after_a_round}");
        for _ in 0..20_000 {
            let r = take(&mut w);
            w.release(r, served(100));
        }
        let near = w.limit();
        assert!((1270..=1290).contains(&near), "then it creeps at the plateau: {near}");
    }

    #[test]
    fn a_burst_of_429s_from_one_window_halves_it_once() {
        let mut w = Window::new(5, 256);
        for _ in 0..3 {
            let r = take(&mut w);
            w.release(r, served(100));
        }
        let limit = w.limit();
        let rounds: Vec<u32> = (0..limit).map(|_| take(&mut w)).collect();
        for r in rounds {
            w.release(r, Signal::Congested { failure: false });
        }
        assert_eq!(w.limit(), limit / 2);
    }

    #[test]
    fn the_ceiling_holds() {
        let mut w = Window::new(5, 8);
        for _ in 0..100 {
            let r = take(&mut w);
            w.release(r, served(100));
        }
        assert_eq!(w.limit(), 8);
        let mut w = Window::new(50, 8);
        assert_eq!(w.limit(), 8, "the start too");
        (0..8).for_each(|_| {
            take(&mut w);
        });
        assert_eq!(w.admit(), Admit::Wait);
    }

    #[test]
    fn first_bytes_slower_by_this_process_own_load_do_not_end_slow_start() {
        // Answers read later as the process sends a quadrupled round: 100 ms, then 180 ms.
        let mut w = Window::new(5, 1024);
        for ms in [100, 100, 100, 100, 100].into_iter().chain([180; 40]) {
            let r = take(&mut w);
            w.release(r, served(ms));
        }
        assert_eq!(w.limit(), 5 + 3 * 45, "still slow start: three more per answer");
        for _ in 0..20 {
            let r = take(&mut w);
            w.release(r, served(250));
        }
        assert!(w.limit() < 140, "a first byte past twice the baseline ends it: {}", w.limit());
    }

    /// Takes a round of the window's whole limit and ends each call with a first byte of `ms`.
    fn round(w: &mut Window, ms: u64) {
        let n = w.limit();
        let out: Vec<u32> = (0..n).map(|_| take(w)).collect();
        for r in out {
            w.release(r, served(ms));
        }
    }

    #[test]
    fn a_stall_of_this_process_holds_slow_start_a_round_and_a_queue_at_the_vendor_ends_it() {
        let mut w = Window::new(5, 100_000);
        (0..3).for_each(|_| round(&mut w, 100));
        assert_eq!(w.limit(), 320);
        // n8n stalls: every call out during it reads its first byte four times late.
        round(&mut w, 400);
        let held = w.limit();
        assert_eq!(held, 320, "neither grown nor cut: a call sent after it decides");
        // The calls sent after the stall answer as before: slow start goes on.
        round(&mut w, 100);
        assert_eq!(w.limit(), 4 * held, "slow start again");
        // The vendor queues: the calls sent after the first late one are late too.
        let queued_at = w.limit();
        round(&mut w, 400);
        assert_eq!(w.limit(), queued_at, "held a round");
        let r = take(&mut w);
        w.release(r, served(400));
        assert_eq!(w.limit(), queued_at / 2, "confirmed: the half cut");
    }

    #[test]
    fn a_first_byte_that_triples_beyond_the_vendors_capacity_settles_the_window() {
        // A vendor whose first byte takes 100 ms up to K calls at once and three times that
        // beyond (slow start's overshoot: it holds up to four times what it serves at once).
        for k in [8u32, 16, 40] {
            let mut w = Window::new(5, 256);
            let mut limits = Vec::new();
            for _ in 0..60 {
                let n = w.limit();
                let rounds: Vec<u32> = (0..n).map(|_| take(&mut w)).collect();
                let ms = if n > k { 300 } else { 100 };
                for r in rounds {
                    w.release(r, served(ms));
                }
                limits.push(w.limit());
            }
            let settled = &limits[30..];
            let (lo, hi) = (settled.iter().min().unwrap(), settled.iter().max().unwrap());
            assert!(*lo + 2 >= k && *hi <= k + 2, "K={k}: {limits:?}");
        }
    }

    #[test]
    fn a_congestion_heard_from_the_fleet_lowers_the_window_once_and_the_calls_out_are_old_news() {
        let mut w = Window::new(5, 256);
        let r = take(&mut w);
        w.release(r, served(100));
        assert_eq!(w.limit(), 8);
        let out = take(&mut w);
        w.share(Advice { limit: 3, congested_at_ms: 1000 });
        assert_eq!(w.limit(), 3);
        w.share(Advice { limit: 3, congested_at_ms: 1000 });
        w.release(out, Signal::Congested { failure: false });
        assert_eq!(w.limit(), 3, "a call sent before the news: not cut again");
        w.share(Advice { limit: 2, congested_at_ms: 2000 });
        assert_eq!(w.limit(), 2, "a newer congestion is heard");
    }

    #[test]
    fn a_served_window_starts_from_the_fleets_limit_an_unserved_one_keeps_the_threshold() {
        let mut w = Window::new(5, 256);
        w.share(Advice { limit: 40, congested_at_ms: 0 });
        assert_eq!(w.room(), 5, "before a first success: the threshold, whatever the fleet says");
        let r = take(&mut w);
        w.release(r, served(100));
        w.share(Advice { limit: 40, congested_at_ms: 0 });
        assert_eq!(w.limit(), 40);
        let r = take(&mut w);
        w.release(r, served(100));
        assert_eq!(w.limit(), 43, "no congestion known: still slow start");
        let mut w = Window::new(5, 20);
        let r = take(&mut w);
        w.release(r, served(100));
        w.share(Advice { limit: 40, congested_at_ms: 9 });
        assert_eq!(w.limit(), 20, "never above its ceiling");
    }
}
