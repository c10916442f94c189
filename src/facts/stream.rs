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
}

/// The limits of one streamed attempt, as the node arms its timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamStep {
    /// Abort and report a timeout when no committing chunk arrived by then (never past the
    /// attempt's deadline nor the item's budget).
    pub first_chunk_ms: u64,
    /// Once committed: abort when no chunk arrived for this long.
    pub idle_ms: u64,
    /// Once committed: abort when the stream is still open after this long from the call (what
    /// is left of the item's budget).
    pub total_ms: u64,
}

impl StreamLimits {
    pub fn step(&self, deadline_ms: u64, remaining_ms: u64) -> StreamStep {
        StreamStep {
            first_chunk_ms: self.first_chunk_ms.min(deadline_ms).min(remaining_ms),
            idle_ms: self.idle_ms.min(remaining_ms),
            total_ms: remaining_ms,
        }
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
    fn the_first_chunk_wait_never_outlasts_the_attempt_nor_the_budget() {
        let l = StreamLimits { first_chunk_ms: 8_000, idle_ms: 30_000 };
        assert_eq!(l.step(10_000, 60_000), StreamStep { first_chunk_ms: 8_000, idle_ms: 30_000, total_ms: 60_000 });
        assert_eq!(l.step(10_000, 5_000), StreamStep { first_chunk_ms: 5_000, idle_ms: 5_000, total_ms: 5_000 });
    }
}
