//! The window a provider's calls learned, shared by the fleet in a row of its own (`limit`): an
//! execution starts from what the others learned, and one congestion seen anywhere lowers every
//! execution's window at its next poll. Written only when it says something new (a congestion
//! below the stored limit, or growth by a quarter), so a steady healthy path writes nothing.
//! Sans-IO: the window proposes, [`record`] writes from the row as the store has it (re-run on
//! fresh rows after a lost race), [`advice`] reads it back.
use serde::{Deserialize, Serialize};

/// The learned limit as the store keeps it. A row older than [`STALE_MS`] is not adopted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct LimitRow {
    /// Calls at once the provider took without congestion, as last learned (0: never written).
    pub limit: u32,
    /// When a window last met congestion there (0: never).
    pub congested_at_ms: u64,
    pub updated_ms: u64,
    pub version: u64,
    /// The limit when congestion last cut it (0: none yet, the limit is in slow start); growth
    /// slows just below it (`fleet_limit`).
    pub plateau: u32,
    /// The parts of the limit held by workers and guarded calls (`fleet_limit`).
    pub shares: Vec<Share>,
    /// In slow start, since when a seat read a queued first byte (0: none): growth holds until a
    /// call sent after it says whether the vendor queues (`fleet_limit::release`).
    #[serde(skip_serializing_if = "is_zero")]
    pub suspect_ms: u64,
    /// Until when the shares' service is counted in them (`fair_share::accrue`; 0: never).
    #[serde(skip_serializing_if = "is_zero")]
    pub accrued_ms: u64,
}

/// One holder's part of the limit: a worker's seat, or one guarded call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Share {
    pub holder: String,
    pub slots: u32,
    pub until_ms: u64,
    /// It found the limit spent: holders above their fair part give back as their calls end.
    pub wants: bool,
    /// Its calls' priority (`crate::limits::priority`): normal unless written.
    pub rank: u8,
    /// Until when its wait holds lower ranks off (0: it holds none off).
    pub waits_until_ms: u64,
    /// Its fair-share key's weight in the split (1 unless written; the key is in its holder's
    /// name, [`Share::party`]).
    #[serde(skip_serializing_if = "is_one")]
    pub weight: u32,
    /// What its key is owed: the time it held less than its fair part while it waited, less the
    /// time it held more, in slot-milliseconds (below 0: it was served past its part; the same
    /// on each of the key's shares; `fair_share::accrue`).
    #[serde(skip_serializing_if = "is_nothing_owed")]
    pub owed: i64,
}

/// Between a holder's own name and its fair-share key (`ChainConfig::fair_share_key`): a holder
/// named `worker-1\u{1f}customer-42` counts under `customer-42`. In the name, not a field of its
/// own: an older worker's row keeps it, and the key costs the engine no field to carry.
pub const KEY_MARK: char = '\u{1f}';

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_nothing_owed(n: &i64) -> bool {
    *n == 0
}

fn is_one(w: &u32) -> bool {
    *w == 1
}

impl Default for Share {
    fn default() -> Share {
        Share {
            holder: String::new(),
            slots: 0,
            until_ms: 0,
            wants: false,
            rank: NORMAL,
            waits_until_ms: 0,
            weight: 1,
            owed: 0,
        }
    }
}

/// The key a holder counts under in the fair split (the limit is split between the keys by
/// weight, a key's part between its holders): the key in its name ([`KEY_MARK`]), or the name
/// itself where it has none.
pub fn party(holder: &str) -> &str {
    holder.split_once(KEY_MARK).map_or(holder, |(_, key)| key)
}

/// `holder`'s name under `key` (none where `key` is empty).
pub fn keyed(mut holder: String, key: &str) -> String {
    if !key.is_empty() {
        holder.push(KEY_MARK);
        holder.push_str(key);
    }
    holder
}

/// The ranks of `ChainConfig::priority` a share waits at (`crate::limits::priority`).
pub const LOW: u8 = 0;
pub const NORMAL: u8 = 1;
pub const HIGH: u8 = 2;

/// How long a learned limit is trusted: a vendor's capacity an hour ago says little now.
pub const STALE_MS: u64 = 10 * 60 * 1000;
/// Growth written back: at least this share of the stored limit, and at least 2 calls.
const GROWTH_SHARE: f64 = 0.25;

/// What a window's call taught, handed to [`record`] with the call's other effects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowNews {
    /// The window after the call's outcome.
    pub limit: u32,
    /// The outcome cut the window (a 429, a hinted 503, a timeout, a slowing first byte).
    pub congested: bool,
    /// The window has served a call in this execution (its limit is measured, not assumed).
    pub served: bool,
}

/// What a window takes from the stored row at a poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Advice {
    /// The fleet's learned limit (fresh rows only).
    pub limit: u32,
    /// When congestion was last seen there, for a window to hear it once.
    pub congested_at_ms: u64,
}

/// The stored row as a window may use it at `now`, or `None` (never written, or stale).
pub fn advice(row: &LimitRow, now: u64) -> Option<Advice> {
    (row.limit > 0 && now.saturating_sub(row.updated_ms) < STALE_MS)
        .then_some(Advice { limit: row.limit, congested_at_ms: row.congested_at_ms })
}

/// The row to write for `news` at `now`, or `None` when it says nothing the row does not.
pub fn record(row: &LimitRow, news: WindowNews, now: u64) -> Option<LimitRow> {
    let fresh = advice(row, now);
    let next = |congested_at_ms| LimitRow {
        limit: news.limit.max(1),
        congested_at_ms,
        updated_ms: now,
        version: row.version.wrapping_add(1),
        ..row.clone()
    };
    match fresh {
        // A congestion below what the fleet believes: every execution hears it.
        Some(a) if news.congested && news.limit < a.limit => Some(next(now)),
        None if news.congested => Some(next(now)),
        // Growth by a quarter (and two calls) over the stored limit, measured by a served window.
        Some(a) if news.served && f64::from(news.limit) >= grown(a.limit) => Some(next(a.congested_at_ms)),
        None if news.served => Some(next(0)),
        _ => None,
    }
}

fn grown(limit: u32) -> f64 {
    (f64::from(limit) * (1.0 + GROWTH_SHARE)).max(f64::from(limit) + 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_000_000;

    fn row(limit: u32, congested_at_ms: u64) -> LimitRow {
        LimitRow { limit, congested_at_ms, updated_ms: NOW - 1000, version: 3, ..Default::default() }
    }

    fn news(limit: u32, congested: bool) -> WindowNews {
        WindowNews { limit, congested, served: true }
    }

    #[test]
    fn a_congestion_below_the_fleets_limit_is_written_with_its_time() {
        let w = record(&row(10, 0), news(5, true), NOW).unwrap();
        assert_eq!((w.limit, w.congested_at_ms, w.updated_ms, w.version), (5, NOW, NOW, 4));
        assert_eq!(record(&row(4, 0), news(5, true), NOW), None, "the fleet already believes less");
    }

    #[test]
    fn growth_is_written_only_by_a_quarter_and_two_calls_so_a_steady_path_writes_nothing() {
        assert_eq!(record(&row(8, 77), news(9, false), NOW), None);
        let w = record(&row(8, 77), news(10, false), NOW).unwrap();
        assert_eq!((w.limit, w.congested_at_ms), (10, 77), "growth keeps the last congestion's time");
        assert_eq!(record(&row(40, 0), news(49, false), NOW), None);
        assert!(record(&row(40, 0), news(50, false), NOW).is_some());
        let unserved = WindowNews { served: false, ..news(50, false) };
        assert_eq!(record(&row(8, 0), unserved, NOW), None, "an assumed window teaches nothing");
    }

    #[test]
    fn a_fresh_row_is_written_by_the_first_served_window_and_a_stale_one_is_not_advice() {
        assert_eq!(record(&LimitRow::default(), news(5, false), NOW).unwrap().limit, 5);
        let stale = LimitRow { updated_ms: NOW - STALE_MS, ..row(30, 0) };
        assert_eq!(advice(&stale, NOW), None);
        assert_eq!(advice(&row(30, 9), NOW), Some(Advice { limit: 30, congested_at_ms: 9 }));
        assert_eq!(record(&stale, news(5, false), NOW).unwrap().limit, 5, "stale: rewritten");
    }
}
