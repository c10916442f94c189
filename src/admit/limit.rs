//! The one interface every limit implements, and what a call asks and holds.
use crate::config::Chain;
use crate::item::Effect;
use crate::limits::breaker::Transition;
use crate::limits::fleet_limit::Taker;
use crate::limits::pool::Pool;
use crate::limits::token_budget::Estimate;
use crate::limits::token_limit::Reservation;
use crate::rows::{ProviderView, Writes};
use crate::verdict::reason::Reason;
use std::cell::RefCell;

/// What this item alone knows about a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Local {
    /// Done with it for this item: the reason, and from when trying again could help.
    pub done: Option<(Reason, u64)>,
    /// A gate slot this item reserved and is sleeping towards.
    pub reserved_at_ms: Option<u64>,
    /// A call to it now would be a retry (this item already made a call): it spends from the
    /// provider's retry budget.
    pub retry: bool,
    /// What a call to it would reserve of its tokens per minute (`token_limit`).
    pub estimate: Estimate,
    /// At its spent fleet limit the item waits for a slot here rather than moving on (Call
    /// Chain's line, or the chat model's short wait not yet spent).
    pub waits_for_slot: bool,
}

/// What one call asks of a provider's limits.
pub struct Ask<'a> {
    pub chain: &'a Chain,
    pub provider: usize,
    pub view: &'a ProviderView,
    pub local: &'a Local,
    /// Who takes a slot of the fleet's limit, where the chain bounds it.
    pub taker: Option<&'a Taker>,
    pub now: u64,
    pub holder: &'a str,
    pub max_wait_ms: u64,
    /// The item's place in its execution's windows (Item Concurrency *Auto*); none for a call
    /// outside them (a hedge, a continuation, a dry run, a guard's check).
    pub pool: Option<&'a InPool<'a>>,
}

/// An item's place in its execution's pool of windows.
pub struct InPool<'a> {
    pub pool: &'a RefCell<Pool>,
    pub member: u32,
}

/// What a call holds once the limits let it go: the rows its reservations write with it, and
/// what it carries to its settlement.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Held {
    pub writes: Writes,
    /// It is the breaker's half-open probe.
    pub probe: bool,
    pub transition: Option<Transition>,
    /// It holds a slot of the fleet's limit (`Some`); `Some(true)`: taking it grew the limit.
    pub seat: Option<bool>,
    /// What it reserved of the provider's tokens and spend cap.
    pub tokens: Option<Reservation>,
    /// The round of the execution's window it holds a slot of.
    pub window_round: Option<u32>,
}

/// Why a limit does not let the call go now.
pub enum Refusal {
    /// Skip the provider, why and until when. `register`: rows that tell the others this worker
    /// waits (written only where the item waits); `wait_here`: the item waits for this provider
    /// instead of moving on (Call Chain 2.1's line at the fleet's limit).
    Skip { reason: Reason, until_ms: u64, register: Option<Writes>, wait_here: bool },
    /// The rate gate reserved a later slot for the call: these rows alone, then sleep until it.
    Later { at_ms: u64, writes: Writes },
    /// The execution's window is full: wait in its line for this provider, nothing written.
    Queue,
}

impl Refusal {
    pub fn skip(reason: Reason, until_ms: u64) -> Refusal {
        Refusal::Skip { reason, until_ms, register: None, wait_here: false }
    }
}

/// One limit on a provider's calls.
pub trait Limit {
    /// May the call go now? If so, its reservation is in `held`.
    fn reserve(&self, ask: &Ask, held: &mut Held) -> Result<(), Refusal>;
    /// The call ended as `effect` says: the row this limit writes for it (what it used settled,
    /// what it held released), into `writes`; nothing where nothing changed.
    fn settle(&self, chain: &Chain, view: &ProviderView, effect: &Effect, now: u64, writes: &mut Writes);
}
