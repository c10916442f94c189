//! Rows already read: at Item Concurrency 1 on a shared store, the node lets the next item decide
//! on rows read before (by the item before it, or read ahead while its call was out), so a
//! healthy item's store round trip overlaps a call or is not made at all. An item decides on
//! them only if this execution wrote nothing to the store since the read began (the node counts
//! its writes), and only for as long after the read as the poll that handed out the call said
//! (`Polled::read_ahead_ms`); the node keeps that time, as it keeps a call's deadline, and reads
//! again while a call is out once half of it is gone.
use crate::chain::Writes;
use crate::step::Step;

/// How long rows may serve the next item's decision after they were read.
///
/// Why this age: a decision on rows already read is the race of a call already admitted when
/// another worker opens the breaker, which the breaker tolerates (threshold plus the calls in
/// flight). This bounds how much later a worker sees another's transition (its own failures it
/// sees at once: their writes make the node read again); after a slower call the item reads afresh.
pub const READ_AHEAD_MAX_AGE_MS: u64 = 100;

/// For the step a poll hands out and the rows it writes first: how long the rows it decided on,
/// or rows read while that call is out, may serve the next item's decision (0: none may). None for a call whose record writes
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
