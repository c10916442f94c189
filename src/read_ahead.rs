//! Rows read ahead: while one item's call is out and more items of the execution wait, the node
//! reads the next item's rows from a shared store, so the round trip overlaps the call instead of
//! following it (at Item Concurrency 1 it was the one wait a healthy item added on Redis). An
//! item decides on rows read ahead only if this execution wrote nothing to the store since the
//! read began (the node counts its writes), and only for as long as the poll that handed out the
//! call said (`Polled::read_ahead_ms`); the node keeps that time, as it keeps a call's deadline.
use crate::chain::Writes;
use crate::step::Step;

/// How long rows read ahead may serve the next item's decision after the read.
///
/// Why this age: a decision on rows read ahead is the race of a call already admitted when
/// another worker opens the breaker, which the breaker tolerates (threshold plus the calls in
/// flight). It widens that race by at most the previous call's length, so the bound keeps it to
/// a fast vendor's calls; after a slower call the item reads afresh.
pub const READ_AHEAD_MAX_AGE_MS: u64 = 100;

/// For the step a poll hands out and the rows it writes first: how long rows read while that
/// call is out may serve the next item (0: read none ahead). None for a call whose record writes
/// whatever its outcome (it gives back the in-flight lease it takes, or it is the half-open
/// probe with its verdict): rows read while it is out are stale by the time it ends.
pub fn read_ahead_ms(step: &Step, writes: Option<&Writes>) -> u64 {
    match step {
        Step::Call { probe: true, .. } => 0,
        Step::Call { .. } if writes.is_some_and(|w| w.in_flight.is_some()) => 0,
        Step::Call { .. } => READ_AHEAD_MAX_AGE_MS,
        _ => 0,
    }
}
