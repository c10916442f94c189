//! A streamed call (the chat model under a root node that streams): what commits it, and the
//! limits that bound it. Until its first committing chunk a streamed call is an attempt like any
//! other, bounded by the first-chunk deadline; once committed the item has its answer, partly
//! delivered, so it is never moved to another provider: an idle limit between chunks and the
//! item's budget bound it, not the per-attempt deadline (a long healthy answer is not cut for
//! being long). Its end (done, dropped, idle too long) is the attempt's one outcome.
use serde::{Deserialize, Serialize};

/// A chain's limits for streamed calls, validated (`ChainConfig::first_chunk_deadline_ms`,
/// `stream_idle_ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StreamLimits {
    pub first_chunk_ms: u64,
    pub idle_ms: u64,
    /// `ChainConfig::learn_stream_pace`.
    pub learn_pace: bool,
}

/// The limits of one streamed attempt, as the node arms its timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamStep {
    /// Abort and report a timeout when no committing chunk arrived by then (never past the
    /// attempt's deadline nor the item's budget).
    pub first_chunk_ms: u64,
    /// Once committed: abort when no chunk arrived for this long (the outer bound where the
    /// stream's pace is learned: [`Pace`]).
    pub idle_ms: u64,
    /// The idle limit follows the stream's own chunks ([`Pace`]).
    pub learn_pace: bool,
    /// Once committed: abort when the stream is still open after this long from the call (what
    /// is left of the item's budget).
    pub total_ms: u64,
    /// Where the pace is learned: the idle limit the provider's last answers give
    /// (`facts::pace_row::idle_ms`), until the stream's own chunks set it; 0: none known.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub paced_idle_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl StreamLimits {
    /// `paced`: the first-chunk deadline its provider's pace gives (`facts::pace_row`) where the
    /// chain learns it, else the fixed one. A learned deadline is bounded by the item's budget
    /// alone: the wait for a first token is the model's own pace, not an answer's time (a
    /// reasoning model thinks 15-25 s, past a 10 s per-attempt deadline, and then streams).
    /// `paced_idle`: the idle limit the provider's last answers give, 0 when none.
    pub fn step(&self, deadline_ms: u64, remaining_ms: u64, paced: u64, paced_idle: u64) -> StreamStep {
        let outer = if self.learn_pace { remaining_ms } else { deadline_ms.min(remaining_ms) };
        let idle_ms = self.idle_ms.min(remaining_ms);
        StreamStep {
            first_chunk_ms: paced.min(outer),
            idle_ms,
            total_ms: remaining_ms,
            learn_pace: self.learn_pace,
            paced_idle_ms: if self.learn_pace { paced_idle.min(idle_ms) } else { 0 },
        }
    }
}

/// A committed stream's idle limit, learned from its own chunks so far: a model that streams
/// quickly and goes silent is cut in seconds, not at the fixed limit, also on its first message
/// (nothing from the fleet needed). The fixed limit stays the outer bound and the limit until
/// enough gaps were seen; a pause longer than any so far (a tool call being written, a long
/// thought) is allowed `IDLE_GAP_FACTOR` times the longest gap and never less than
/// `IDLE_FLOOR_MS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    outer_ms: u64,
    /// The idle limit the provider's last answers give, until this stream's own gaps do (0: none).
    fleet_ms: u64,
    learns: bool,
    last_ms: Option<u64>,
    longest_gap_ms: u64,
    gaps: u32,
}

/// Gaps between chunks seen before the stream's own pace sets its idle limit.
pub const PACE_MIN_GAPS: u32 = 8;
/// The idle limit is this many times the longest gap between chunks so far.
pub const IDLE_GAP_FACTOR: u64 = 10;
/// A learned idle limit is never below this.
pub const IDLE_FLOOR_MS: u64 = 2_000;

impl Pace {
    /// The step's idle limit (Stream Idle Limit, within the item's budget), learned from the
    /// chunks if the step says so (its `learn_pace`); `fleet_ms`: the one the provider's last
    /// answers give until then (0: the outer limit).
    pub fn new(outer_ms: u64, learns: bool, fleet_ms: u64) -> Pace {
        Pace { outer_ms, fleet_ms, learns, last_ms: None, longest_gap_ms: 0, gaps: 0 }
    }

    /// The stream's longest gap between chunks, once it had enough of them to show its pace:
    /// what its end teaches the provider's row (`facts::pace_row::learn`).
    pub fn learned_gap(&self) -> Option<u64> {
        (self.learns && self.gaps >= PACE_MIN_GAPS).then_some(self.longest_gap_ms)
    }

    /// A chunk arrived at `at_ms` (the node's clock): the idle limit from now.
    pub fn chunk(&mut self, at_ms: u64) -> u64 {
        if let Some(last) = self.last_ms {
            self.longest_gap_ms = self.longest_gap_ms.max(at_ms.saturating_sub(last));
            self.gaps += 1;
        }
        self.last_ms = Some(at_ms);
        self.idle_ms()
    }

    /// The idle limit now.
    pub fn idle_ms(&self) -> u64 {
        if !self.learns {
            return self.outer_ms;
        }
        if self.gaps < PACE_MIN_GAPS {
            // The provider's pace until the stream's own; a longer pause so far is its own.
            return match self.fleet_ms {
                0 => self.outer_ms,
                fleet => fleet.max(self.longest_gap_ms.saturating_mul(IDLE_GAP_FACTOR)).min(self.outer_ms),
            };
        }
        self.longest_gap_ms.saturating_mul(IDLE_GAP_FACTOR).max(IDLE_FLOOR_MS).min(self.outer_ms)
    }
}

/// What one streamed chunk carries, as the node read it (lengths, not the text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ChunkFacts {
    pub text_chars: u32,
    pub tool_call_chunks: u32,
    pub reasoning_chars: u32,
}

/// Whether this chunk commits the call to its model: it carries text, a tool-call delta or
/// reasoning. Role-only deltas, `message_start`, `ping`, `response.created` and the like carry
/// none: they neither commit the call nor stop the first-chunk clock.
pub fn commits(c: &ChunkFacts) -> bool {
    c.text_chars > 0 || c.tool_call_chunks > 0 || c.reasoning_chars > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_content_commits_a_stream() {
        assert!(!commits(&ChunkFacts::default()), "a role-only delta or message_start");
        assert!(commits(&ChunkFacts { text_chars: 1, ..Default::default() }));
        assert!(commits(&ChunkFacts { tool_call_chunks: 1, ..Default::default() }));
        assert!(commits(&ChunkFacts { reasoning_chars: 3, ..Default::default() }));
    }

    #[test]
    fn the_first_chunk_wait_never_outlasts_the_budget_nor_a_fixed_one_the_attempt() {
        let l = StreamLimits { first_chunk_ms: 8_000, idle_ms: 30_000, learn_pace: false };
        let step = |first_chunk_ms, idle_ms, total_ms| StreamStep {
            first_chunk_ms,
            idle_ms,
            total_ms,
            learn_pace: false,
            paced_idle_ms: 0,
        };
        assert_eq!(l.step(10_000, 60_000, 8_000, 2_000), step(8_000, 30_000, 60_000), "nothing learned");
        assert_eq!(l.step(10_000, 5_000, 8_000, 0), step(5_000, 5_000, 5_000));
        assert_eq!(l.step(10_000, 60_000, 32_000, 0).first_chunk_ms, 10_000, "fixed: the attempt's deadline bounds it");
        let learns = StreamLimits { learn_pace: true, ..l };
        assert_eq!(
            learns.step(10_000, 60_000, 32_000, 0).first_chunk_ms,
            32_000,
            "learned: past the attempt's deadline"
        );
        assert_eq!(learns.step(10_000, 20_000, 32_000, 0).first_chunk_ms, 20_000, "never past the budget");
        assert_eq!(learns.step(10_000, 60_000, 8_000, 2_000).paced_idle_ms, 2_000);
        assert_eq!(learns.step(10_000, 60_000, 8_000, 90_000).paced_idle_ms, 30_000, "within the fixed limit");
    }

    #[test]
    fn a_quick_stream_that_goes_silent_is_cut_in_seconds_a_slow_one_keeps_its_pace() {
        let mut quick = Pace::new(30_000, true, 0);
        let limits: Vec<u64> = (0..20).map(|i| quick.chunk(i * 50)).collect();
        assert_eq!(limits[..8], [30_000; 8], "too few gaps: the fixed limit");
        assert_eq!(limits[19], IDLE_FLOOR_MS, "chunks every 50 ms: the floor");
        let mut slow = Pace::new(30_000, true, 0);
        let last = (0..20).map(|i| slow.chunk(i * 400 + (i % 3) * 100)).last().unwrap();
        assert_eq!(last, 5_000, "ten times its longest gap (500 ms)");
        let mut halting = Pace::new(5_000, true, 0);
        let last = (0..20).map(|i| halting.chunk(i * 1_000)).last().unwrap();
        assert_eq!(last, 5_000, "never past the outer bound");
        let mut fixed = Pace::new(30_000, false, 0);
        let last = (0..20).map(|i| fixed.chunk(i * 50)).last().unwrap();
        assert_eq!(last, 30_000, "not learned (before the chat model 1.2): the fixed limit");
        assert_eq!(fixed.learned_gap(), None);
        assert_eq!(quick.learned_gap(), Some(50), "what its end teaches the provider");
    }

    #[test]
    fn a_new_stream_takes_the_providers_pace_until_its_own_chunks_set_it() {
        let mut told = Pace::new(30_000, true, 2_000);
        assert_eq!(told.chunk(0), 2_000, "cut 2 s after its first chunk if nothing follows");
        assert_eq!(told.chunk(50), 2_000);
        assert_eq!(told.chunk(450), 4_000, "a longer pause of its own: ten times it");
        assert_eq!(told.learned_gap(), None, "too few gaps to teach");
        let limits: Vec<u64> = (1..=10).map(|i| told.chunk(450 + i * 50)).collect();
        assert_eq!(limits[9], 4_000, "then its own pace");
    }
}
