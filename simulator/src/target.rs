//! The names of the targets a scenario may hold this product to (`"targets"` in the file).
//! Apart from `checks`, which evaluates them, so a scenario can name them without a cycle.

/// Every target, in the order they are checked; a scenario without `"targets"` holds all.
/// (`hedge_tail` is checked only when a hedging policy runs, `latency_routing` only when
/// `route_latency` does.)
pub const KEYS: [&str; 9] = [
    "fewer_requests",
    "no_429",
    "no_ban",
    "loop_banned",
    "peak_under_soft_limit",
    "near_ideal",
    "none_lost",
    "hedge_tail",
    "latency_routing",
];
