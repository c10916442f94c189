//! Key Quotas: what one Fair Share Key (a customer, a workflow) may use of the whole chain per
//! minute, UTC day or UTC month — requests, tokens, spend — shared by the fleet in a row of its
//! own (`quota`), stored under the key's name rather than a provider's, so every provider of
//! every chain that counts under the key reads and writes the same row.
//!
//! A call counts one request when it goes. Tokens and spend are held at the call's estimate while
//! it is out (as the spend cap's holds, `spend_hold`) and settled at the usage its answer reported:
//! the calls out at once cannot together pass a quota, the last call admitted below it may pass it
//! by its own size (more where it uses more than its estimate). A key over a quota waits for the
//! period's end (a minute's quota, within the item's wait) or is deferred with `retry_at` then;
//! other keys go on. An older worker in a rolling upgrade never reads the row kind: it counts
//! nothing against the key and never sees its limit.
use crate::limits::spend_hold::RECHECK_MS;
use crate::limits::token_budget::{Limits, Period, MINUTE_MS};
use serde::{Deserialize, Serialize};

/// What a quota counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    Requests,
    Tokens,
    /// In millionths of the user's currency unit, at each provider's prices.
    Spend,
}

/// The period a quota is per: a fixed minute, or a UTC day or month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Per {
    Minute,
    Day,
    Month,
}

impl Per {
    /// The start and end of the period `now` is in (the store's clock, UTC).
    pub fn period(self, now: u64) -> (u64, u64) {
        match self {
            Per::Minute => {
                let start = now - now % MINUTE_MS;
                (start, start.saturating_add(MINUTE_MS))
            }
            Per::Day => Limits { period: Period::Day, ..Limits::default() }.period(now),
            Per::Month => Limits { period: Period::Month, ..Limits::default() }.period(now),
        }
    }
}

/// One quota: at most `limit` of `measure` per `per`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quota {
    pub measure: Measure,
    pub per: Per,
    pub limit: u64,
}

impl Quota {
    /// Its place in the row: measure x 3 + per (requests, tokens, spend; minute, day, month).
    fn slot(&self) -> u64 {
        (self.measure as u64) * 3 + self.per as u64
    }
}

/// A call out's hold: until when (its reservation's time plus its lease), and its estimate's
/// tokens and cost. A call finds its own by all three: no names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Hold {
    pub until_ms: u64,
    pub tokens: u64,
    pub micros: u64,
}

/// A key's row: what each quota counted in its current period, `[slot, period start, used]` per
/// quota, and the holds of its calls out, `[until, tokens, micros]` each, as flat lists of
/// numbers (one reader for both: the WASM engine's size).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct QuotaRow {
    pub counts: Vec<u64>,
    pub held: Vec<u64>,
    pub version: u64,
}

/// A call's size for the quotas: its estimate before it goes, what it used at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Size {
    pub tokens: u64,
    pub micros: u64,
}

impl QuotaRow {
    /// What `quota` counted in the period `now` is in.
    pub fn used(&self, quota: &Quota, now: u64) -> u64 {
        let (slot, start) = (quota.slot(), quota.per.period(now).0);
        self.counts.chunks_exact(3).find(|c| c[0] == slot && c[1] == start).map_or(0, |c| c[2])
    }

    fn holds(&self) -> impl Iterator<Item = Hold> + '_ {
        self.held.chunks_exact(3).map(|h| Hold { until_ms: h[0], tokens: h[1], micros: h[2] })
    }

    /// What the calls out hold of `measure` at `now` (requests hold nothing: they counted).
    pub fn held(&self, measure: Measure, now: u64) -> u64 {
        let live = self.holds().filter(|h| h.until_ms > now);
        match measure {
            Measure::Requests => 0,
            Measure::Tokens => live.fold(0u64, |s, h| s.saturating_add(h.tokens)),
            Measure::Spend => live.fold(0u64, |s, h| s.saturating_add(h.micros)),
        }
    }

    /// `n` more of `measure` counted in each of its quotas' periods (a past period's count
    /// replaced).
    fn add(&mut self, quotas: &[Quota], measure: Measure, n: u64, now: u64) {
        if n == 0 {
            return;
        }
        for q in quotas.iter().filter(|q| q.measure == measure) {
            let (slot, start) = (q.slot(), q.per.period(now).0);
            match self.counts.chunks_exact_mut(3).find(|c| c[0] == slot) {
                Some(c) if c[1] == start => c[2] = c[2].saturating_add(n),
                Some(c) => c.copy_from_slice(&[slot, start, n]),
                None => self.counts.extend([slot, start, n]),
            }
        }
    }

    /// The row to write next: its version raised, lapsed holds dropped, `without` released.
    fn next(&self, now: u64, without: Option<Hold>) -> QuotaRow {
        let mut held = Vec::with_capacity(self.held.len());
        let mut released = false;
        for h in self.holds() {
            if !released && Some(h) == without {
                released = true;
            } else if h.until_ms > now {
                held.extend([h.until_ms, h.tokens, h.micros]);
            }
        }
        QuotaRow { counts: self.counts.clone(), held, version: self.version.wrapping_add(1) }
    }
}

/// The call goes: the key's row to write, and its hold (settled at its end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    pub row: QuotaRow,
    pub hold: Hold,
}

/// A call of estimated `size` under `quotas`, on the key's row at `now`, holding until
/// `until_ms`: it goes when every quota has room; else `Err(when to look again)`: the period's end
/// for a quota spent, a moment for one the calls out hold (their answers release it).
pub fn take(row: &QuotaRow, quotas: &[Quota], size: Size, until_ms: u64, now: u64) -> Result<Taken, u64> {
    let mut again: Option<u64> = None;
    for q in quotas {
        let used = row.used(q, now);
        let spent = match q.measure {
            Measure::Requests => used.saturating_add(1) > q.limit,
            Measure::Tokens | Measure::Spend => used >= q.limit,
        };
        let held = !spent && used.saturating_add(row.held(q.measure, now)) >= q.limit;
        let at = if spent { q.per.period(now).1 } else { now.saturating_add(RECHECK_MS) };
        if spent || held {
            again = again.max(Some(at));
        }
    }
    if let Some(at) = again {
        return Err(at);
    }
    let counts = |m: Measure| quotas.iter().any(|q| q.measure == m);
    let hold = Hold {
        until_ms,
        tokens: if counts(Measure::Tokens) { size.tokens } else { 0 },
        micros: if counts(Measure::Spend) { size.micros } else { 0 },
    };
    let mut next = row.next(now, None);
    next.add(quotas, Measure::Requests, 1, now);
    if hold.tokens > 0 || hold.micros > 0 {
        next.held.extend([hold.until_ms, hold.tokens, hold.micros]);
    }
    Ok(Taken { row: next, hold })
}

/// The call holding `hold` ended having used `used`: its hold released, what it used counted.
/// `None`: nothing to write (nothing held, nothing used that a quota counts).
pub fn settle(row: &QuotaRow, quotas: &[Quota], hold: Hold, used: Size, now: u64) -> Option<QuotaRow> {
    let counts = |m: Measure| quotas.iter().any(|q| q.measure == m);
    let tokens = if counts(Measure::Tokens) { used.tokens } else { 0 };
    let micros = if counts(Measure::Spend) { used.micros } else { 0 };
    let releases = (hold.tokens > 0 || hold.micros > 0) && row.holds().any(|h| h == hold);
    if !releases && tokens == 0 && micros == 0 {
        return None;
    }
    let mut next = row.next(now, releases.then_some(hold));
    next.add(quotas, Measure::Tokens, tokens, now);
    next.add(quotas, Measure::Spend, micros, now);
    Some(next)
}

/// What each of `quotas` counted at `now`, and what the calls out hold of it (Get Provider State).
pub fn left(row: &QuotaRow, quotas: &[Quota], now: u64) -> Vec<(Quota, u64, u64)> {
    quotas.iter().map(|q| (*q, row.used(q, now), row.held(q.measure, now))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: u64 = 1_796_601_600_000; // 2026-12-07T00:00:00Z
    const LEASE: u64 = 25_000;
    const DAY: u64 = 86_400_000;

    fn quota(measure: Measure, per: Per, limit: u64) -> Quota {
        Quota { measure, per, limit }
    }

    fn go(row: &QuotaRow, quotas: &[Quota], size: Size, now: u64) -> Taken {
        take(row, quotas, size, now + LEASE, now).unwrap_or_else(|at| panic!("refused until {at}"))
    }

    #[test]
    fn a_key_makes_its_requests_per_minute_then_waits_for_the_next_minute() {
        let q = [quota(Measure::Requests, Per::Minute, 3)];
        let mut row = QuotaRow::default();
        for k in 0..3 {
            row = go(&row, &q, Size::default(), T + k * 1_000).row;
        }
        assert_eq!(row.used(&q[0], T + 3_000), 3);
        assert_eq!(take(&row, &q, Size::default(), T + LEASE, T + 30_000), Err(T + MINUTE_MS), "the next minute");
        let row = go(&row, &q, Size::default(), T + MINUTE_MS).row;
        assert_eq!(row.used(&q[0], T + MINUTE_MS), 1, "a new minute counts afresh");
        assert_eq!(row.counts.len(), 3, "the old minute's count is replaced, not kept");
        assert!(row.held.is_empty(), "a request holds nothing: it counted");
    }

    #[test]
    fn tokens_per_day_are_held_at_the_estimate_and_settled_at_the_usage() {
        let q = [quota(Measure::Tokens, Per::Day, 10_000)];
        let a = go(&QuotaRow::default(), &q, Size { tokens: 4_000, micros: 9 }, T);
        assert_eq!(a.hold, Hold { until_ms: T + LEASE, tokens: 4_000, micros: 0 }, "spend is not counted here");
        let b = go(&a.row, &q, Size { tokens: 4_000, micros: 0 }, T + 1);
        assert_eq!(b.row.held(Measure::Tokens, T + 2), 8_000);
        // Two calls hold 8,000 and used none yet: a third fits (the last may pass by its size).
        let c = go(&b.row, &q, Size { tokens: 4_000, micros: 0 }, T + 2);
        assert_eq!(take(&c.row, &q, Size { tokens: 1, micros: 0 }, T + LEASE, T + 3), Err(T + 3 + RECHECK_MS));
        let row = settle(&c.row, &q, a.hold, Size { tokens: 1_500, micros: 0 }, T + 10).unwrap();
        let row = settle(&row, &q, b.hold, Size { tokens: 2_500, micros: 0 }, T + 11).unwrap();
        assert_eq!((row.used(&q[0], T + 12), row.held(Measure::Tokens, T + 12)), (4_000, 4_000));
        let row = settle(&row, &q, c.hold, Size { tokens: 7_000, micros: 0 }, T + 12).unwrap();
        assert_eq!(row.used(&q[0], T + 13), 11_000, "the last one passed it by its usage");
        let day = DAY;
        assert_eq!(take(&row, &q, Size { tokens: 1, micros: 0 }, T + LEASE, T + 14), Err(T + day), "spent: tomorrow");
        assert!(take(&row, &q, Size { tokens: 1, micros: 0 }, T + day + LEASE, T + day).is_ok());
    }

    #[test]
    fn a_hold_whose_worker_died_lapses_and_a_settled_hold_is_released_once() {
        let q = [quota(Measure::Spend, Per::Month, 1_000)];
        let a = go(&QuotaRow::default(), &q, Size { tokens: 5, micros: 1_000 }, T);
        assert!(take(&a.row, &q, Size { tokens: 5, micros: 10 }, T + LEASE, T + 1).is_err(), "held");
        assert!(take(&a.row, &q, Size { tokens: 5, micros: 10 }, T + 2 * LEASE, T + LEASE).is_ok(), "lapsed");
        let row = settle(&a.row, &q, a.hold, Size { tokens: 5, micros: 300 }, T + 5).unwrap();
        assert_eq!(row.used(&q[0], T + 5), 300);
        let again = settle(&row, &q, a.hold, Size::default(), T + 6);
        assert_eq!(again, None, "released already, nothing used: nothing to write");
    }

    #[test]
    fn each_quota_counts_its_own_period_and_the_tightest_says_when() {
        let q = [quota(Measure::Requests, Per::Minute, 100), quota(Measure::Requests, Per::Day, 2)];
        let row = go(&QuotaRow::default(), &q, Size::default(), T).row;
        let row = go(&row, &q, Size::default(), T + 1).row;
        let day = DAY;
        assert_eq!(take(&row, &q, Size::default(), T + LEASE, T + 2 * MINUTE_MS), Err(T + day));
        assert_eq!(left(&row, &q, T + 5).iter().map(|l| l.1).collect::<Vec<_>>(), vec![2, 2]);
        assert_eq!(left(&row, &q, T + 2 * MINUTE_MS).iter().map(|l| l.1).collect::<Vec<_>>(), vec![0, 2]);
    }
}
