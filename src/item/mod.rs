//! The item: one item's machine (from its first call to done, deferred or failed), its session
//! across the two-call boundary, the guard's ticket, and what its outcomes write. The machine: drives one item from its first call to done, deferred or failed.
//! Sans-IO in the quinn-proto manner: the caller feeds time, shared state and outcomes in
//! (`poll`, `on_outcome`) and carries out the steps that come out (call, sleep, write rows).
//! `types`: what crosses to the caller; `counters`: what an item adds to each provider's
//! counters; `machine`: the item machine (its hedging in `machine/hedging.rs`); `retry`: the
//! retry ladder after a retryable outcome.
mod counters;
mod machine;
pub mod record;
mod retry;
pub mod session;
pub mod ticket;
mod types;

pub use counters::Counters;
pub use machine::{CallEnd, ItemMachine};
pub use types::{AttemptLog, Effect, Poll, Report, Step, WaitCause, WAKE_SLACK_MS};
