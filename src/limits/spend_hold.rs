//! A spend cap that holds at any concurrency (`spend`, a row kind of its own). Before a call to a
//! provider with a spend cap goes, its estimated cost (its token estimate at the provider's
//! prices) is held against the cap beside what the period has spent, so the calls out at once
//! cannot together pass it; the call's end releases its hold (its real cost goes to the period's
//! spend in the `tokens` row). The cap is then passed by at most one call, by at most its cost,
//! whenever each call costs at most its estimate; a call costing more passes it by the
//! difference. A hold its worker never released (killed mid-call) lapses at its lease's end. An
//! older worker in a rolling upgrade neither reads nor writes the row: its calls check only what
//! was spent, as before.
use serde::{Deserialize, Serialize};

/// How soon a call turned away by the holds of calls out looks again: their answers release them.
pub const RECHECK_MS: u64 = 200;

/// The holds of the calls out: (when it lapses, its cost estimate in millionths of the unit).
/// A call finds its own by both (its reservation's time plus its lease, its estimate): no names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct SpendRow {
    pub held: Vec<(u64, u64)>,
    pub version: u64,
}

fn live(row: &SpendRow, now: u64) -> impl Iterator<Item = &(u64, u64)> {
    row.held.iter().filter(move |(until, _)| *until > now)
}

/// The cost held by calls out at `now`.
pub fn held(row: &SpendRow, now: u64) -> u64 {
    live(row, now).fold(0u64, |sum, (_, micros)| sum.saturating_add(*micros))
}

/// The row with `micros` held until `until_ms` (lapsed holds dropped).
pub fn hold(row: &SpendRow, micros: u64, until_ms: u64, now: u64) -> SpendRow {
    let mut held: Vec<(u64, u64)> = live(row, now).copied().collect();
    held.push((until_ms, micros));
    SpendRow { held, version: row.version.wrapping_add(1) }
}

/// The row with one hold of `micros` until `until_ms` released (and lapsed ones dropped);
/// `None`: there is none (it lapsed, or another write released it).
pub fn release(row: &SpendRow, until_ms: u64, micros: u64, now: u64) -> Option<SpendRow> {
    let at = row.held.iter().position(|h| *h == (until_ms, micros))?;
    let mut held = row.held.clone();
    held.remove(at);
    held.retain(|(until, _)| *until > now);
    Some(SpendRow { held, version: row.version.wrapping_add(1) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_add_up_until_released_or_lapsed() {
        let row = hold(&SpendRow::default(), 300, 10_000, 0);
        let row = hold(&row, 200, 5_000, 1);
        let row = hold(&row, 200, 5_000, 2);
        assert_eq!((held(&row, 3), row.version), (700, 3));
        assert_eq!(held(&row, 5_000), 300, "the 200s lapsed: their workers are gone");
        let released = release(&row, 5_000, 200, 4).unwrap();
        assert_eq!((held(&released, 4), released.version), (500, 4), "one of two alike");
        assert_eq!(release(&released, 9_999, 300, 5), None, "no such hold: nothing to write");
        assert_eq!(hold(&row, 1, 9_000, 6_000).held.len(), 2, "the lapsed holds are dropped");
    }
}
