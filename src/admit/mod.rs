//! Admission: every limit a call to a provider must pass, behind one interface, asked in one
//! order. Each limit *reserves* what the call takes (the row it writes with the call, or what the
//! call carries to its end), and *settles* at the call's end with what the call used, releasing
//! what it held; a hold the call never settles lapses with its lease. A new limit is a module here
//! and a line in [`LIMITS`]; the item machine knows none of them by name.
//!
//! The order: the breaker first (an open provider asks nothing else, and its half-open probe is
//! a claim the rate gate must not reserve a later slot for), then the shared limits that only
//! count (the retry budget, tokens and spend, the key's quotas, the rate gate), then those that hold a slot while
//! the call is out (Max In Flight, the fleet's limit), and last the execution's window (Item
//! Concurrency *Auto*, in memory), so it never keeps a slot for a call a shared limit turned away.
//! The key's quotas come after tokens (they hold the estimate tokens made) and, with tokens and
//! spend, before the gate: a gate slot reserved for later is kept only for a call
//! they let go (a spent cap would turn the item away at its slot, and it would reserve again).
// A refusal carries the rows it writes (a later gate slot, a waiting worker's registration):
// made and taken apart at once, once per provider asked, unboxed as `token_limit::Take` is.
#![allow(clippy::result_large_err)]
use crate::config::Chain;
use crate::item::Effect;
use crate::rows::{ProviderView, Writes};

mod breaker;
mod fleet;
mod in_flight;
mod key_quota;
mod limit;
mod rate_gate;
mod retry_budget;
mod tokens;
mod window;

pub use limit::{Ask, Held, InPool, Limit, Local, Refusal};

/// Every limit, in the order a call asks them.
pub const LIMITS: [&dyn Limit; 8] = [
    &breaker::Breaker,
    &retry_budget::RetryBudget,
    &tokens::Tokens,
    &key_quota::KeyQuota,
    &rate_gate::RateGate,
    &in_flight::InFlight,
    &fleet::FleetShare,
    &window::ExecutionWindow,
];

/// Ask every limit in order: the call's holds when all let it go, else the first that did not.
pub fn reserve(ask: &Ask) -> Result<Held, Refusal> {
    let mut held = Held { writes: Writes { provider: ask.provider, ..Default::default() }, ..Default::default() };
    for limit in LIMITS {
        limit.reserve(ask, &mut held)?;
    }
    Ok(held)
}

/// Every limit's settlement of a call's end, into one set of rows.
pub fn settle(chain: &Chain, view: &ProviderView, effect: &Effect, now: u64, writes: &mut Writes) {
    for limit in LIMITS {
        limit.settle(chain, view, effect, now, writes);
    }
}
