//! Priority at the fleet's limit: where a provider's learned limit is spent, a call of a higher
//! priority waiting anywhere in the fleet takes the slots that free before any call of a lower
//! one. It waits registered in its worker's share of the `limit` row (its rank and until when its
//! wait stands); a worker of a lower rank that reads it gives back what it does not use as its
//! calls end and takes no free slot, growth included. Nothing changes while nobody waits: a
//! provider with room admits every priority at once.
//!
//! Nobody is starved: a worker that has waited [`HOLD_MS`] unserved, at any priority, waits at
//! High until its next call goes (then at its own again): a lower priority behind a higher one's
//! steady demand, or one worker among many equal ones whose freed slots others keep taking.
use crate::limits::learned_limit::{LimitRow, Share};
pub use crate::limits::learned_limit::{HIGH, LOW, NORMAL};
use serde::{Deserialize, Serialize};

/// A registered wait stands this long; a call still waiting renews it at half of it (a wait
/// given up, failed over or ended lapses by itself, and never holds the others off longer).
pub const STANDS_MS: u64 = 2_000;

/// The longest a worker waits at its own rank: then it waits at High until its next call goes.
pub const HOLD_MS: u64 = 10_000;

/// The live shares of the others than `holder`.
fn others<'a>(row: &'a LimitRow, holder: &'a str, now: u64) -> impl Iterator<Item = &'a Share> {
    row.shares.iter().filter(move |s| s.holder != holder && s.until_ms > now)
}

/// Whether a share other than `holder`'s waits at a rank above `rank` now.
pub fn outranked(row: &LimitRow, holder: &str, rank: u8, now: u64) -> bool {
    others(row, holder, now).any(|s| s.wants && s.rank > rank && s.waits_until_ms > now)
}

/// The rank a worker waits at: its own, or High once it has waited [`HOLD_MS`] unserved.
pub fn rank(own: u8, waiting_since: Option<u64>, now: u64) -> u8 {
    match waiting_since {
        Some(from) if now.saturating_sub(from) >= HOLD_MS => HIGH,
        _ => own,
    }
}

/// Whether `mine`'s registered wait at `rank` still stands for a while (else it is written again).
pub fn registered(mine: &Share, rank: u8, now: u64) -> bool {
    mine.wants && mine.rank == rank && mine.waits_until_ms > now + STANDS_MS / 2
}

/// Whether live shares of a rank below `rank` hold slots (one could give back to a wait at
/// `rank`, which then stands only while renewed).
pub fn above_some(row: &LimitRow, holder: &str, rank: u8, now: u64) -> bool {
    others(row, holder, now).any(|s| s.rank < rank && s.slots > 0)
}

/// Whether no share of a rank above `rank` holds slots (then `holder` may probe the vendor).
pub fn quiet_above(row: &LimitRow, holder: &str, rank: u8, now: u64) -> bool {
    !others(row, holder, now).any(|s| s.rank > rank && s.slots > 0)
}

/// The workers waiting at a provider's spent fleet limit now, by their calls' priority (Get
/// Provider State's demand by priority).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Waiting {
    pub high: u32,
    pub normal: u32,
    pub low: u32,
}

pub fn waiting(row: &LimitRow, now: u64) -> Waiting {
    let mut w = Waiting::default();
    for s in row.shares.iter().filter(|s| s.wants && s.until_ms > now) {
        *match s.rank {
            HIGH => &mut w.high,
            LOW => &mut w.low,
            _ => &mut w.normal,
        } += 1;
    }
    w
}
