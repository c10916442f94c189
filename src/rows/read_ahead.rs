//! Rows already read: at Item Concurrency 1 on a shared store, the node lets the next item decide
//! on rows read before (by the item before it, or read ahead while its call was out), so a
//! healthy item's store round trip overlaps a call or is not made at all. An item decides on
//! them only if this execution wrote nothing to the store since the read began (the node counts
//! its writes), and only for as long after the read as the poll that handed out the call said
//! (`Polled::read_ahead`); the node keeps those times, as it keeps a call's deadline.
use serde::Serialize;

use crate::choose::chain::Writes;
use crate::item::Step;

/// A poll's grant to the rows it decided on, or rows read while its call is out: times after the
/// rows came back, kept by the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReadAhead {
    /// The rows may serve the next item's decision (one decision) until this long after they
    /// were read.
    pub serves_ms: u64,
    /// Rows older than this when the call goes out are read again while it is out, so the next
    /// item does not wait on the store.
    pub read_again_ms: u64,
}

/// How long rows may serve the next item's decision after they were read.
///
/// Why this age: a decision on rows already read is the race of a call already admitted when
/// another worker opens the breaker, which the breaker tolerates (threshold plus the calls in
/// flight). This bounds how much later a worker sees another's transition (its own failures it
/// sees at once: their writes make the node read again); after a slower call the item reads afresh.
pub const READ_AHEAD_MAX_AGE_MS: u64 = 100;

/// Half the grant: after a call of up to this long, the next item still finds rows young enough
/// to serve it; the store sees at most one read a call, at most two per grant.
pub const READ_AGAIN_AFTER_MS: u64 = READ_AHEAD_MAX_AGE_MS / 2;
const _: () = assert!(READ_AGAIN_AFTER_MS > 0 && READ_AGAIN_AFTER_MS < READ_AHEAD_MAX_AGE_MS);

/// Whether rows read `age_ms` ago (on this process's clock, kept by the node) may still serve
/// under a grant's `limit_ms` (`serves_ms`, or `read_again_ms` for a read not yet read again).
pub fn serves(age_ms: f64, limit_ms: f64) -> bool {
    age_ms <= limit_ms
}

/// For the step a poll hands out and the rows it writes first: whether, and how long, the rows it
/// decided on, or rows read while that call is out, may serve the next item's decision. None for
/// a call whose record writes whatever its outcome (it gives back the in-flight lease it takes,
/// or it is the half-open probe with its verdict): rows read while it is out are stale by the
/// time it ends.
pub fn read_ahead(step: &Step, writes: Option<&Writes>) -> Option<ReadAhead> {
    let grant = ReadAhead { serves_ms: READ_AHEAD_MAX_AGE_MS, read_again_ms: READ_AGAIN_AFTER_MS };
    match step {
        Step::Call { probe: true, .. } => None,
        Step::Call { .. } if writes.is_some_and(|w| w.in_flight.is_some()) => None,
        Step::Call { .. } => Some(grant),
        _ => None,
    }
}
