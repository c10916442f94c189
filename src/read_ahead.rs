//! Rows read ahead: while one item's call is out and more items of the execution wait, the node
//! reads the next item's rows from a shared store, so the round trip overlaps the call instead of
//! following it (at Item Concurrency 1 it was the one wait a healthy item added on Redis). An
//! item decides on rows read ahead only if this execution wrote nothing to the store since the
//! read began, and only while they are this young.
//!
//! Why this age: a decision on rows read ahead is the race of a call already admitted when
//! another worker opens the breaker, which the breaker tolerates (threshold plus the calls in
//! flight). It widens that race by at most the previous call's length, so the bound keeps it to
//! a fast vendor's calls; after a slower call the item reads afresh.
pub const READ_AHEAD_MAX_AGE_MS: u64 = 100;
