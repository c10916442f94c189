//! A provider's pace to its first chunk, shared by the fleet in a row kind of its own (`pace`; an
//! older worker in a rolling upgrade reads the kinds it knows and leaves this one alone): the
//! times to the first committing chunk of its last streamed calls, and the first-chunk deadline
//! that last cut one of them with nothing. A streamed call's first-chunk deadline follows it
//! (`ChainConfig::learn_stream_pace`, the chat model 1.2):
//! - with a few recent times, three times the slowest of them, at least 2 s: a model that is
//!   usually quick is cut in seconds when it goes silent;
//! - with none, the fixed *First-Chunk Deadline*; with one or two, that or three times the
//!   slowest, whichever is longer;
//! - after a cut with nothing, twice the deadline that cut it: a model slower than the fixed
//!   deadline (a reasoning model's first token after 15-25 s) is cut once or twice, then given the
//!   time it takes and learned from its first answer.
//!
//!
//! It keeps, too, the longest gap between chunks of its last streamed answers that were long
//! enough to show their pace: a new stream's idle limit follows them ([`idle_ms`]) until its own
//! chunks set it (`facts::stream::Pace`), so a model that goes silent after its third chunk is cut
//! in seconds, not at the fixed *Stream Idle Limit*.
//!
//! The item's budget stays the outer bound; the per-attempt deadline does not bound a learned
//! deadline (`StreamLimits::step`): the wait for a first token is the model's pace.
use crate::facts::stream::{IDLE_FLOOR_MS, IDLE_GAP_FACTOR};
use serde::{Deserialize, Serialize};

/// Times kept: the newest this many.
pub const SAMPLES: usize = 8;
/// A time or a cut older than this says nothing of the provider now.
pub const MAX_AGE_MS: u64 = 30 * 60_000;
/// Recent times needed before they set the deadline.
pub const MIN_SAMPLES: usize = 3;
/// The deadline is this many times the slowest recent time to first chunk...
pub const FACTOR: u64 = 3;
/// ...and never below this.
pub const FLOOR_MS: u64 = 2_000;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PaceRow {
    /// Times to the first committing chunk (ms), oldest first, with `at_ms` alongside.
    pub ms: Vec<u64>,
    /// When each of `ms` was measured (the store's clock).
    pub at_ms: Vec<u64>,
    /// The first-chunk deadline that last cut a call with nothing (0: none since a first chunk).
    pub cut_ms: u64,
    pub cut_at_ms: u64,
    /// The longest gap between chunks of its last paced streamed answers (ms), oldest first, with
    /// `gap_at_ms` alongside.
    pub gap_ms: Vec<u64>,
    pub gap_at_ms: Vec<u64>,
    pub version: u64,
}

/// What a streamed call's end teaches its provider's pace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaceNews {
    /// Its first committing chunk came after this long.
    FirstChunk(u64),
    /// The first-chunk deadline of this length passed with nothing.
    Cut(u64),
}

fn fresh(at: u64, now: u64) -> bool {
    now.saturating_sub(at) <= MAX_AGE_MS
}

/// `value` measured at `now` added to a list and its times (kept in pairs: a row from the store
/// may hold lists of unequal length), the newest [`SAMPLES`] kept.
fn push(values: &mut Vec<u64>, at_ms: &mut Vec<u64>, value: u64, now: u64) {
    let n = values.len().min(at_ms.len());
    values.truncate(n);
    at_ms.truncate(n);
    values.push(value);
    at_ms.push(now);
    let extra = values.len().saturating_sub(SAMPLES);
    values.drain(..extra);
    at_ms.drain(..extra);
}

/// How many of `values` are fresh at `now`, and the largest of those.
fn recent(values: &[u64], at_ms: &[u64], now: u64) -> (usize, Option<u64>) {
    let mut fresh_count = 0;
    let mut largest = None;
    for (&v, &at) in values.iter().zip(at_ms) {
        if fresh(at, now) {
            fresh_count += 1;
            largest = largest.max(Some(v));
        }
    }
    (fresh_count, largest)
}

/// The row with `news` recorded at `now`.
pub fn record(row: &PaceRow, news: PaceNews, now: u64) -> PaceRow {
    let mut next = PaceRow { version: row.version.wrapping_add(1), ..row.clone() };
    match news {
        PaceNews::FirstChunk(ms) => {
            push(&mut next.ms, &mut next.at_ms, ms, now);
            next.cut_ms = 0;
        }
        PaceNews::Cut(ms) => {
            let before = if fresh(row.cut_at_ms, now) { row.cut_ms } else { 0 };
            next.cut_ms = before.max(ms);
            next.cut_at_ms = now;
        }
    }
    next
}

/// What a call's end teaches the row, if anything: its first chunk or cut, and a streamed
/// answer's longest gap between chunks (`gap_ms`), in one new version of the row.
pub fn learn(row: &PaceRow, news: Option<PaceNews>, gap_ms: Option<u64>, now: u64) -> Option<PaceRow> {
    if news.is_none() && gap_ms.is_none() {
        return None;
    }
    let mut next = match news {
        Some(news) => record(row, news, now),
        None => PaceRow { version: row.version.wrapping_add(1), ..row.clone() },
    };
    if let Some(gap) = gap_ms {
        push(&mut next.gap_ms, &mut next.gap_at_ms, gap, now);
    }
    Some(next)
}

/// A new stream's idle limit from the provider's recent answers at `now`, before its own chunks
/// set it: with a few recent longest gaps, ten times the longest of them, at least 2 s (the
/// stream's own rule, `facts::stream::Pace`); 0 with fewer (the fixed limit holds).
pub fn idle_ms(row: &PaceRow, now: u64) -> u64 {
    match recent(&row.gap_ms, &row.gap_at_ms, now) {
        (n, Some(gap)) if n >= MIN_SAMPLES => gap.saturating_mul(IDLE_GAP_FACTOR).max(IDLE_FLOOR_MS),
        _ => 0,
    }
}

/// The first-chunk deadline the provider's pace gives a streamed call at `now`, before the
/// attempt's deadline and the item's budget bound it; `fixed`: the deadline with no history.
pub fn first_chunk_ms(row: &PaceRow, now: u64, fixed: u64) -> u64 {
    // Below the fixed deadline only on a few times; above it on one (a slow model that answered).
    let base = match recent(&row.ms, &row.at_ms, now) {
        (n, Some(slowest)) if n >= MIN_SAMPLES => slowest.saturating_mul(FACTOR).max(FLOOR_MS),
        (_, Some(slowest)) => slowest.saturating_mul(FACTOR).max(fixed),
        (_, None) => fixed,
    };
    if row.cut_ms > 0 && fresh(row.cut_at_ms, now) {
        base.max(row.cut_ms.saturating_mul(2))
    } else {
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(times: &[u64], at: u64) -> PaceRow {
        times.iter().fold(PaceRow::default(), |r, &ms| record(&r, PaceNews::FirstChunk(ms), at))
    }

    #[test]
    fn a_quick_model_is_given_three_times_its_slowest_recent_first_chunk_at_least_two_seconds() {
        assert_eq!(first_chunk_ms(&PaceRow::default(), 0, 8_000), 8_000, "no history: the fixed deadline");
        assert_eq!(first_chunk_ms(&fed(&[300, 400], 0), 0, 8_000), 8_000, "two times: not yet");
        assert_eq!(first_chunk_ms(&fed(&[4_000], 0), 0, 8_000), 12_000, "one slow time: above the fixed");
        assert_eq!(first_chunk_ms(&fed(&[300, 400, 350], 0), 0, 8_000), FLOOR_MS);
        assert_eq!(first_chunk_ms(&fed(&[900, 1_200, 1_000], 0), 0, 8_000), 3_600);
        assert_eq!(first_chunk_ms(&fed(&[300, 400, 350], 0), MAX_AGE_MS + 1, 8_000), 8_000, "stale: as none");
    }

    #[test]
    fn a_reasoning_model_cut_twice_is_then_given_its_time_and_learned() {
        let cut = |row: &PaceRow, now| record(row, PaceNews::Cut(first_chunk_ms(row, now, 8_000)), now);
        let row = cut(&PaceRow::default(), 0);
        assert_eq!(first_chunk_ms(&row, 1, 8_000), 16_000, "cut at 8 s: twice that next");
        let row = cut(&row, 2);
        assert_eq!(first_chunk_ms(&row, 3, 8_000), 32_000, "cut at 16 s: 32 s, its 15-25 s fit");
        let row = record(&row, PaceNews::FirstChunk(21_000), 4);
        assert_eq!(row.cut_ms, 0, "a first chunk ends what the cuts said");
        let row = [18_000, 24_000].iter().fold(row, |r, &ms| record(&r, PaceNews::FirstChunk(ms), 5));
        assert_eq!(first_chunk_ms(&row, 6, 8_000), 72_000, "three times its slowest: the attempt's deadline bounds it");
    }

    #[test]
    fn a_new_stream_follows_the_longest_gaps_of_the_providers_last_answers() {
        let gap = |r: &PaceRow, g| learn(r, None, Some(g), 0).unwrap();
        let row = [50, 80, 60].iter().fold(PaceRow::default(), |r, &g| gap(&r, g));
        assert_eq!(idle_ms(&gap(&PaceRow::default(), 50), 0), 0, "one answer: not yet");
        assert_eq!(idle_ms(&row, 0), 2_000, "ten times 80 ms, at least 2 s");
        let slow = [400, 350, 900].iter().fold(PaceRow::default(), |r, &g| gap(&r, g));
        assert_eq!(idle_ms(&slow, 0), 9_000);
        assert_eq!(idle_ms(&row, MAX_AGE_MS + 1), 0, "stale: as none");
        let many = (1..=20).fold(PaceRow::default(), |r, g| gap(&r, g));
        assert_eq!(many.gap_ms, (13..=20).collect::<Vec<u64>>());
        let both = learn(&row, Some(PaceNews::FirstChunk(300)), Some(70), 1).unwrap();
        assert_eq!(both.version, row.version + 1, "one write: one version (compare-and-set expects it)");
        assert_eq!(learn(&row, None, None, 1), None);
    }

    #[test]
    fn only_the_newest_times_are_kept_in_pairs() {
        let row = fed(&(1..=20).collect::<Vec<u64>>(), 7);
        assert_eq!(row.ms, (13..=20).collect::<Vec<u64>>());
        assert_eq!(row.at_ms, vec![7; SAMPLES]);
        let odd = PaceRow { ms: vec![1, 2, 3], at_ms: vec![0], ..PaceRow::default() };
        let next = record(&odd, PaceNews::FirstChunk(9), 1);
        assert_eq!((next.ms, next.at_ms), (vec![1, 9], vec![0, 1]));
    }
}
