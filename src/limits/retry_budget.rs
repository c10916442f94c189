//! A retry budget per provider, shared by the fleet in its own row (`budget`), as Finagle's and
//! tower's: retries (and fail-overs arriving at the provider after a failure elsewhere) are
//! allowed while those of the last window stay under a share of its calls plus a floor per
//! second. First attempts are never throttled. Calls are counted while they matter (the window
//! holds a retry, or the call failed) and by sampling: one call in `SAMPLE_EVERY` deposits that
//! many. A healthy provider's row is never written; a failing one's on one call in eight (the
//! row is the fleet's: every write of it is a compare-and-set).
use serde::{Deserialize, Serialize};

/// One call in this many deposits this many calls (on average, every call is counted once).
pub const SAMPLE_EVERY: u32 = 8;

/// The chain's budget (validated); `None` when off (a share of 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RetryBudget {
    /// Retries allowed per 100 calls of the window.
    pub percent: u32,
    /// Retries allowed per second of the window whatever the calls (a quiet provider still
    /// gets its retries).
    pub floor_per_s: u32,
    pub window_ms: u64,
}

/// One second of a provider's window: calls counted and retries taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Second {
    pub s: u64,
    pub calls: u32,
    pub retries: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct BudgetRow {
    pub seconds: Vec<Second>,
    pub version: u64,
}

/// What a retry may do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spend {
    /// Taken: write the row.
    Granted(BudgetRow),
    /// Spent until then (when the window's oldest retry leaves it).
    Spent { until_ms: u64 },
}

impl RetryBudget {
    fn live(&self, row: &BudgetRow, now: u64) -> Vec<Second> {
        let first = (now.saturating_sub(self.window_ms) / 1000) + 1;
        row.seconds.iter().copied().filter(|b| b.s >= first).collect()
    }

    fn bumped(&self, row: &BudgetRow, now: u64, calls: u32, retries: u32) -> BudgetRow {
        let mut seconds = self.live(row, now);
        let s = now / 1000;
        match seconds.iter_mut().find(|b| b.s == s) {
            Some(b) => {
                b.calls = b.calls.saturating_add(calls);
                b.retries = b.retries.saturating_add(retries);
            }
            None => seconds.push(Second { s, calls, retries }),
        }
        BudgetRow { seconds, version: row.version.wrapping_add(1) }
    }

    /// The retries of the window so far, and how many it allows.
    pub fn standing(&self, row: &BudgetRow, now: u64) -> (u64, u64) {
        let live = self.live(row, now);
        let calls: u64 = live.iter().map(|b| b.calls as u64).sum();
        let retries: u64 = live.iter().map(|b| b.retries as u64).sum();
        let floor = self.floor_per_s as u64 * self.window_ms / 1000;
        (retries, floor + calls * self.percent as u64 / 100)
    }

    /// A retry to this provider now: taken from the budget, or refused until a retry of the
    /// window leaves it.
    pub fn spend(&self, row: &BudgetRow, now: u64) -> Spend {
        let (retries, allowed) = self.standing(row, now);
        if retries < allowed {
            return Spend::Granted(self.bumped(row, now, 0, 1));
        }
        let oldest = self.live(row, now).iter().filter(|b| b.retries > 0).map(|b| b.s).min().unwrap_or(now / 1000);
        Spend::Spent { until_ms: oldest.saturating_mul(1000).saturating_add(self.window_ms).max(now.saturating_add(1)) }
    }

    /// Whether calls are being counted: the window holds a retry, or this call failed (a retry
    /// may follow). A healthy provider's calls are not: its row is never written, and the floor
    /// covers the first retries of a new trouble.
    pub fn counting(&self, row: &BudgetRow, now: u64, failed: bool) -> bool {
        failed || self.live(row, now).iter().any(|b| b.retries > 0)
    }

    /// One answered call's deposit (`SAMPLE_EVERY` calls, on the sampled call).
    pub fn deposit(&self, row: &BudgetRow, now: u64) -> BudgetRow {
        self.bumped(row, now, SAMPLE_EVERY, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FINAGLE: RetryBudget = RetryBudget { percent: 20, floor_per_s: 10, window_ms: 10_000 };

    #[test]
    fn a_quiet_provider_gets_the_floor_and_no_more() {
        let mut row = BudgetRow::default();
        let mut granted = 0;
        for k in 0..200 {
            match FINAGLE.spend(&row, 1_000 + k) {
                Spend::Granted(r) => {
                    row = r;
                    granted += 1;
                }
                Spend::Spent { until_ms } => assert!(until_ms > 1_000 + k),
            }
        }
        assert_eq!(granted, 100, "10 a second over 10 s");
    }

    #[test]
    fn calls_raise_the_budget_by_their_share_and_the_window_forgets() {
        let mut row = BudgetRow::default();
        for k in 0..125 {
            row = FINAGLE.deposit(&row, 1_000 + k); // 1000 calls
        }
        assert_eq!(FINAGLE.standing(&row, 2_000), (0, 100 + 200));
        assert_eq!(FINAGLE.standing(&row, 12_000), (0, 100), "ten seconds later the calls have left");
        let Spend::Granted(r) = FINAGLE.spend(&row, 2_000) else { panic!() };
        assert_eq!(FINAGLE.standing(&r, 2_000), (1, 300));
    }

    #[test]
    fn a_spent_budget_says_when_its_oldest_retry_leaves() {
        let tight = RetryBudget { percent: 0, floor_per_s: 1, window_ms: 2_000 };
        let Spend::Granted(row) = tight.spend(&BudgetRow::default(), 5_500) else { panic!() };
        let Spend::Granted(row) = tight.spend(&row, 5_600) else { panic!() };
        assert_eq!(tight.spend(&row, 5_700), Spend::Spent { until_ms: 7_000 });
        assert!(matches!(tight.spend(&row, 7_000), Spend::Granted(_)));
    }
}
