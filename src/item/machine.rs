//! The item machine: drives one item from its first call to done, deferred or failed, in the
//! sans-IO manner of quinn-proto's `Connection`. The caller owns time, the shared rows, the calls
//! and the waits; the machine owns every decision.
//!
//! Call order, for one item:
//! 1. [`ItemMachine::new`] (then [`ItemMachine::stream`] / [`ItemMachine::prefer`] if they apply).
//! 2. [`ItemMachine::poll`] with the providers' rows read at `now` (the store's clock). Write the
//!    [`Poll::writes`] with compare-and-set (a lost race: read again and poll again; nothing was
//!    committed), then carry out [`Poll::step`]:
//!    - `Call`: call the provider within `deadline_ms`, then
//!      [`ItemMachine::on_outcome`] with what came back; write the effect with
//!      [`crate::item::record::record`]; poll again;
//!    - `Sleep`: wait `ms`, then poll again;
//!    - `Await` (hedging only): wait for the calls out, or [`ItemMachine::hedge`] after
//!      `hedge_after_ms`;
//!    - `Done`, `Defer`, `Fail`: the item's end ([`ItemMachine::finished`]).
//! 3. Once ended: [`ItemMachine::counters`] and [`ItemMachine::report`] say what it did; a
//!    hedging item's [`ItemMachine::calls_out`] are each [`ItemMachine::abandon`]ed.
//!
//! [`ItemMachine::defer_now`] ends the item at any point, for trouble outside the chain (a store
//! that fails closed).
//!
//! One item's life (a provider that answers 503 once, then 200):
//! ```
//! use std::sync::Arc;
//! use resilient_engine::choose::chain::ProviderView;
//! use resilient_engine::config::{ChainConfig, ProviderConfig};
//! use resilient_engine::verdict::outcome::Outcome;
//! use resilient_engine::rng::Rng;
//! use resilient_engine::item::{CallEnd, ItemMachine, Step};
//!
//! let providers = vec![ProviderConfig { name: "api".into(), ..Default::default() }];
//! let chain = Arc::new(ChainConfig { providers, ..Default::default() }.validate().unwrap());
//! let mut item = ItemMachine::new(chain, 0, "exec1:0".into(), vec![], Rng::seeded(7));
//! let rows = vec![ProviderView::default()]; // nothing shared yet: a closed breaker
//! let mut now = 0;
//! let mut answers = vec![503, 200].into_iter();
//! let end = loop {
//!     let poll = item.poll(now, &rows).unwrap();
//!     match poll.step {
//!         Step::Call { .. } => {
//!             let status = answers.next().unwrap();
//!             now += 100; // the call took 100 ms
//!             item.on_outcome(now, &Outcome::status(status, Default::default()), &rows, None, CallEnd::default()).unwrap();
//!         }
//!         Step::Sleep { ms, .. } => now += ms, // the full-jitter backoff after the 503
//!         end => break end,
//!     }
//! };
//! assert!(matches!(end, Step::Done { fallback: false, .. }));
//! assert_eq!(item.report().attempts.len(), 2);
//! assert_eq!(item.counters()[0].retries, 1);
//! ```
use super::counters::Counters;
use super::retry::{self, Retry, Standing};
use super::types::{AttemptLog, Effect, Poll, Report, Step, WaitCause, WAKE_SLACK_MS};
use crate::admit::{self, InPool};
use crate::choose::chain::{choose, Choice, Local, ProviderView};
use crate::choose::hedge::CallTag;
use crate::choose::routing::{route, Route};
use crate::config::Chain;
use crate::config::Routing;
use crate::error::EngineError;
use crate::facts::retry_after::HintHeaders;
use crate::limits::concurrency::Signal;
use crate::limits::fleet_limit::{Released, Taker};
use crate::limits::learned_limit::{self, WindowNews};
use crate::limits::pool::Pool;
use crate::limits::seat::Seats;
use crate::limits::token_limit::{self, Reservation, Settle, TokenFacts, Usage, Used};
use crate::rng::Rng;
use crate::verdict::answer_check::AnswerCheck;
use crate::verdict::outcome::{classify, CallFacts, Health, Outcome, Verdict};
use crate::verdict::reason::Reason;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

mod decide;
mod hedging;
mod holds;
mod outcome;

#[derive(Debug, Clone)]
struct Pending {
    /// Its number among the item's calls (a hedging chain's outcomes name it).
    call: u32,
    provider: usize,
    probe: bool,
    /// When the call was handed out (the store's clock): its duration is the outcome's time less this.
    at_ms: u64,
    /// A hedge: it holds its leases under a name of its own (the first call may hold the same
    /// provider's).
    hedge: bool,
    /// Carried out: its write committed (a handed-out call whose write lost its race is dropped
    /// by the next poll or hedge on fresh rows).
    committed: bool,
    /// A streamed call's time to its first committing chunk, as the node measured it.
    first_chunk_ms: Option<u64>,
    /// A streamed call whose first-chunk deadline followed its provider's pace (`learn_pace`):
    /// that deadline, and whether the item's budget cut it below the pace (a cut there says
    /// nothing of the provider).
    paced: Option<(u64, bool)>,
    /// Its slot in the provider's window (Item Concurrency *Auto*): the window's round then.
    window_round: Option<u32>,
    /// It holds a slot of the fleet's limit.
    seat: bool,
    /// Taking its slot grew the fleet's limit: it probes the vendor's capacity (a 429 it meets
    /// is the limit's to answer, by a cut, not a closed gate for every worker).
    grew: bool,
    /// The tokens it reserved (`token_limit`).
    tokens: Option<Reservation>,
    /// It continues a broken stream: the characters the caller had when it was asked for.
    continues: Option<u64>,
}

#[derive(Debug, Clone, Default)]
struct Progress {
    attempts: u32,
    /// Of them, 429s to calls that probed the fleet's limit: not counted against Max Attempts.
    probes_refused: u32,
    prev_delay_ms: u64,
    /// Its answer missed the schema and its repair round is due (the next call to it is one).
    repair_due: bool,
    /// Its one repair round was asked for.
    repaired: bool,
}

#[derive(Debug, Clone)]
pub struct ItemMachine {
    chain: Arc<Chain>,
    started_ms: u64,
    holder: String,
    keys: Vec<Option<String>>,
    rng: Rng,
    progress: Vec<Progress>,
    local: Vec<Local>,
    /// The order this item visits the providers in, fixed at its first poll (`routing`).
    route: Vec<usize>,
    /// A provider to try first, before the routing's choice (the one that served the calls
    /// before this one in the same conversation), while it is admissible.
    prefer: Option<usize>,
    /// The calls out: one, or more while hedging.
    pending: Vec<Pending>,
    next_call: u32,
    /// The streamed call that sent the first committing chunk: the others lost.
    committed_to: Option<u32>,
    sleep_until_ms: u64,
    /// The report's `slept_ms` counts the waits up to here (no wait counted twice).
    slept_until_ms: u64,
    /// The latest time this item decided as of: its clock never runs back (a poll woken within
    /// the slack decides as of its wait's end, and the outcome that follows may come stamped a
    /// hair earlier by the store's clock).
    clock: u64,
    sleep_cause: WaitCause,
    finished: Option<Step>,
    report: Report,
    /// Its calls are streamed: each attempt carries the chain's stream limits.
    streamed: bool,
    /// Item Concurrency *Auto*: the execution's windows, shared by its items.
    pool: Option<Rc<RefCell<Pool>>>,
    /// Its number in the pool (what a wake names).
    member: u32,
    /// The provider whose line it waits in (or whose slot is kept for it).
    queued_for: Option<usize>,
    /// During a poll: the line it came from, until it takes its slot or joins the line again.
    came_from: Option<usize>,
    /// The provider whose reserved gate slot it left untaken (an item sleeps towards one slot at
    /// a time): given back by the next poll that writes nothing else (a poll writes one
    /// provider's rows).
    gate_given_up: Option<usize>,
    /// Its waits in line, per provider, on that provider's tokens per minute or spend cap
    /// (counted as `token_waits`: the skips they replace are not kept).
    token_waits: Vec<u32>,
    /// Since when it waits for a slot of a fleet limit, where its wait is short
    /// (`Chain::slot_wait_ms`); none while it has not waited since its last call.
    slot_wait_from: Option<u64>,
    /// It made a call (one whose poll lost its compare-and-set race was never made).
    called: bool,
    /// A window of its execution refused it (spent before a first success, nothing out): it no
    /// longer waits for its turn but for the provider, and its budget runs.
    refused: bool,
    /// Items in the pool to poll again: slots were granted to them (or the window refuses all).

    /// The worker's seats at the fleet's limits (`fleet_limit`), shared by its items; without
    /// them each call holds a share of its own (a guard's check).
    seats: Option<Rc<RefCell<Seats>>>,
    /// The shared store failed: its rows are this process's memory (its seats keep to their safe
    /// shares and learn none from them).
    on_memory: bool,
    /// What its request is to each provider, for that provider's token estimate (none given:
    /// the output reserve): a chain of a small and a large model asks each for its own maximum.
    token_facts: Vec<Option<TokenFacts>>,
    /// Part of its streamed answer reached the caller and the stream broke: it is finished by
    /// continuation calls (`continue_broken_streams`).
    mid_stream: Option<MidStream>,
    /// The next call handed out continues the stream after this many characters.
    continuation_due: Option<u64>,
}

/// A streamed answer broken after part of it reached the caller, being finished.
#[derive(Debug, Clone, Copy)]
struct MidStream {
    /// The characters of the answer the caller has.
    delivered_chars: u64,
    /// The model whose stream broke last: the one asked again when no other can take it.
    last_broken: usize,
    /// Continuation calls made.
    calls: u32,
}

/// What the caller saw of a call's end beyond its outcome: the tokens its answer reported, and,
/// for a streamed answer that broke, the characters of the answer the caller had by then.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallEnd {
    pub usage: Option<Usage>,
    pub delivered_chars: Option<u64>,
    /// A streamed answer's longest gap between chunks, where it had enough to show its pace.
    pub longest_gap_ms: Option<u64>,
}

impl CallEnd {
    /// A call's end whose answer reported `usage`.
    pub fn used(usage: Option<Usage>) -> CallEnd {
        CallEnd { usage, delivered_chars: None, longest_gap_ms: None }
    }
}

/// Continuation calls one broken answer may take (every model of the chain once, and one more).
fn max_continuations(chain: &Chain) -> u32 {
    chain.providers.len() as u32 + 1
}

impl ItemMachine {
    /// `holder` identifies this item's calls fleet-wide (probe and in-flight leases);
    /// `keys[i]` is the Idempotency-Key for provider i, if any.
    pub fn new(chain: Arc<Chain>, started_ms: u64, holder: String, keys: Vec<Option<String>>, rng: Rng) -> Self {
        let n = chain.providers.len();
        let mut keys = keys;
        keys.resize(n, None);
        ItemMachine {
            chain,
            started_ms,
            holder,
            keys,
            rng,
            progress: vec![Progress::default(); n],
            local: vec![Local::default(); n],
            route: Vec::new(),
            prefer: None,
            pending: Vec::new(),
            next_call: 0,
            committed_to: None,
            sleep_until_ms: 0,
            slept_until_ms: 0,
            clock: 0,
            sleep_cause: WaitCause::Backoff,
            finished: None,
            report: Report::default(),
            streamed: false,
            pool: None,
            member: 0,
            queued_for: None,
            came_from: None,
            gate_given_up: None,
            token_waits: Vec::new(),
            slot_wait_from: None,
            called: false,
            refused: false,
            seats: None,
            on_memory: false,
            token_facts: Vec::new(),
            mid_stream: None,
            continuation_due: None,
        }
    }

    /// This item's calls are streamed (a chat under a root node that streams). Only a chain
    /// configured for streams has the limits that bound them.
    pub fn stream(&mut self) -> Result<(), EngineError> {
        if self.chain.stream.is_none() {
            return Err(EngineError::InvalidInput("a streamed item on a chain without stream limits (streams)".into()));
        }
        self.streamed = true;
        Ok(())
    }

    /// Try `provider` first (an agent's later rounds stay on the model that served its first
    /// while it can take the call) under a routing other than `order`; out of range: refused.
    pub fn prefer(&mut self, provider: usize) -> Result<(), EngineError> {
        if provider >= self.chain.providers.len() {
            return Err(EngineError::InvalidInput(format!("no provider {provider} to prefer")));
        }
        self.prefer = Some(provider);
        Ok(())
    }

    /// A machine for one call admitted elsewhere (a guard's ticket, around another node's call):
    /// its outcome is classified and recorded exactly as in a chain.
    /// `called_at_ms`: when the call was admitted (its duration ends at the outcome).
    pub fn admitted(
        chain: Arc<Chain>,
        now: u64,
        called_at_ms: u64,
        holder: String,
        provider: usize,
        probe: bool,
        rng: Rng,
    ) -> Self {
        let mut m = ItemMachine::new(chain, now, holder, Vec::new(), rng);
        m.pending.push(Pending {
            call: 0,
            provider,
            probe,
            at_ms: called_at_ms,
            hedge: false,
            committed: true,
            first_chunk_ms: None,
            paced: None,
            window_round: None,
            // Its check took a share of one call of the fleet's limit: the report gives it back.
            seat: chain_bounds(&m.chain, provider),
            grew: false,
            tokens: None,
            continues: None,
        });
        m
    }

    /// The final step once the item is done, deferred or failed (no shared state needed).
    pub fn finished(&self) -> Option<&Step> {
        self.finished.as_ref()
    }

    /// The calls out (a hedging item's): once the item is finished, these are to be aborted and
    /// each handed back with [`ItemMachine::abandon`].
    pub fn calls_out(&self) -> Vec<u32> {
        self.pending.iter().filter(|p| p.committed).map(|p| p.call).collect()
    }

    /// The execution was cancelled with calls out: every call the node carried out, each to be
    /// [`ItemMachine::abandon`]ed (its window slot, seat and leases given back, its tokens at their
    /// estimate) rather than left to hold them until the leases end.
    pub fn cancelled(&mut self) -> Vec<u32> {
        self.pending.iter_mut().for_each(|p| p.committed = true);
        self.calls_out()
    }

    /// This item's contribution to each provider's counters, once it ended.
    pub fn counters(&self) -> Vec<Counters> {
        let mut c = vec![Counters::default(); self.chain.providers.len()];
        for a in &self.report.attempts {
            c[a.provider].count(a);
        }
        for s in &self.report.skipped {
            c[s.provider].rejections +=
                matches!(s.reason, Reason::CircuitOpen | Reason::Cooldown | Reason::HalfOpenBusy) as u32;
            c[s.provider].retry_budget_exhausted += (s.reason == Reason::RetryBudget) as u32;
            c[s.provider].token_limited += matches!(s.reason, Reason::TokenLimited | Reason::SpendCap) as u32;
        }
        for (c, &waits) in c.iter_mut().zip(&self.token_waits) {
            c.token_waits += waits;
        }
        if matches!(self.finished, Some(Step::Defer { .. } | Step::Fail { .. })) {
            c[0].give_ups += 1;
        }
        c[0].deferrals += matches!(self.finished, Some(Step::Defer { .. })) as u32;
        c
    }

    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The item ended served: an outcome the engine read as a success.
    pub fn served(&self) -> bool {
        matches!(self.finished, Some(Step::Done { .. }))
    }

    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// When the item's current wait ends (0 or past: nothing to wait for).
    pub fn wake_at(&self) -> u64 {
        self.sleep_until_ms
    }

    /// Hand the item back now with a jittered `retry_at`, for trouble outside the chain (the
    /// shared store is unavailable and the node fails closed).
    pub fn defer_now(&mut self, now: u64, reason: Reason) -> Step {
        if let Some(step) = &self.finished {
            return step.clone();
        }
        // Its calls out end with it: what they hold in memory goes back now (the store, which is
        // why it ends, would be asked to release their rows in vain).
        for p in std::mem::take(&mut self.pending) {
            self.give_back(&p);
        }
        self.defer(now, Some((now, reason))).step
    }
}

/// Whether provider `i`'s calls hold a slot of the fleet's limit.
fn chain_bounds(chain: &Chain, i: usize) -> bool {
    crate::limits::fleet_limit::rules(chain, i).is_some()
}

/// A call among all the fleet's, as a number: its item's holder (FNV-1a, a stable spread of a
/// short text over u64, no hasher state, no randomness) mixed with its number `n` (the attempt,
/// or a hedging item's call). Which calls deposit into the retry budget, without drawing from the
/// item's randomness.
fn call_sample(holder: &str, n: u32) -> u64 {
    let h = holder.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    h ^ u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}
