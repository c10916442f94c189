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
//!      [`crate::record::record`]; poll again;
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
//! use resilient_engine::chain::ProviderView;
//! use resilient_engine::config::{ChainConfig, ProviderConfig};
//! use resilient_engine::outcome::Outcome;
//! use resilient_engine::rng::Rng;
//! use resilient_engine::step::{ItemMachine, Step};
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
//!             item.on_outcome(now, &Outcome::status(status, Default::default()), &rows, None).unwrap();
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
use crate::answer_check::AnswerCheck;
use crate::breaker;
use crate::chain::{choose, Choice, Local, ProviderView};
use crate::concurrency::{Admit, Pool, Signal};
use crate::config::Chain;
use crate::config::Routing;
use crate::error::EngineError;
use crate::fleet_limit::{Released, Seats, Taker};
use crate::hedge::CallTag;
use crate::learned_limit::{self, WindowNews};
use crate::outcome::{classify, CallFacts, Health, Outcome, Verdict};
use crate::reason::Reason;
use crate::retry_after::HintHeaders;
use crate::rng::Rng;
use crate::routing::{route, Route};
use crate::token_limit::{self, Reservation, Settle, TokenFacts, Usage, Used};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

mod hedging;

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
    /// Its slot in the provider's window (Item Concurrency *Auto*): the window's round then.
    window_round: Option<u32>,
    /// It holds a slot of the fleet's limit.
    seat: bool,
    /// The tokens it reserved (`token_limit`).
    tokens: Option<Reservation>,
    /// It continues a broken stream: the characters the caller had when it was asked for.
    continues: Option<u64>,
}

/// The slots a call handed out holds: its window's (Item Concurrency *Auto*: the window's round
/// then) and the fleet limit's (`Some(true)`: taking it grew the limit).
#[derive(Debug, Clone, Copy, Default)]
struct Held {
    window_round: Option<u32>,
    seat: Option<bool>,
    tokens: Option<Reservation>,
}

#[derive(Debug, Clone, Default)]
struct Progress {
    attempts: u32,
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
    /// Items in the pool to poll again: slots were granted to them (or the window refuses all).
    woken: Vec<u32>,
    /// The worker's seats at the fleet's limits (`fleet_limit`), shared by its items; without
    /// them each call holds a share of its own (a guard's check).
    seats: Option<Rc<RefCell<Seats>>>,
    /// What its request is, for the token limits' estimate (none given: the output reserve).
    token_facts: Option<TokenFacts>,
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
            woken: Vec::new(),
            seats: None,
            token_facts: None,
            mid_stream: None,
            continuation_due: None,
        }
    }

    /// What this item's request is (its input's size, the output it asks for at most): what its
    /// calls reserve of a provider's tokens per minute.
    pub fn tokens(&mut self, facts: TokenFacts) {
        self.token_facts = Some(facts);
    }

    /// A call's reservation settled with what it used: `usage` as its answer reported, or none
    /// (`refused`: the vendor answered with a status and processed nothing); `headers`: the
    /// answer's, where the vendor says what is left of its minutes (read only here: a call that
    /// reserved nothing never parses them). `None` where the call reserved nothing.
    pub(super) fn settle_tokens(
        &self,
        provider: usize,
        reservation: Option<Reservation>,
        usage: Option<&Usage>,
        refused: bool,
        headers: Option<&HintHeaders>,
        now: u64,
    ) -> Option<Settle> {
        let rules = self.chain.providers[provider].tokens.as_ref()?;
        let reservation = reservation?;
        let used = token_limit::used(rules, &reservation, usage, refused);
        let remaining = headers.map(|h| token_limit::remaining(h, now)).unwrap_or_default();
        Some(Settle { reservation, used, remaining })
    }

    /// The fleet's learned limit: this item's calls are made within its worker's `seats`.
    pub fn seat(&mut self, seats: Rc<RefCell<Seats>>) {
        self.seats = Some(seats);
    }

    /// Who takes each provider's next slot of the fleet's limit (none where it is not bounded).
    fn takers(&self, holder: &str) -> Vec<Taker> {
        if !self.chain.fleet_limit {
            return Vec::new();
        }
        match &self.seats {
            Some(seats) => {
                let seats = seats.borrow();
                (0..self.chain.providers.len()).map(|i| seats.taker(i)).collect()
            }
            None => {
                let call = Taker { holder: holder.to_string(), keeps: false, in_use: 0, served_full: 0 };
                vec![call; self.chain.providers.len()]
            }
        }
    }

    /// A call holding a fleet slot ended: the seat counts it, and the row hears what it says.
    fn leave_seat(&mut self, holder: &str, sent_ms: u64, provider: usize, signal: Signal) -> Released {
        let (holder, keeps, in_use) = match &self.seats {
            Some(seats) => {
                let mut seats = seats.borrow_mut();
                seats.seats[provider].end(signal);
                (seats.holder.clone(), true, seats.seats[provider].in_use)
            }
            None => (holder.to_string(), false, 0),
        };
        Released { holder, keeps, in_use, congested: matches!(signal, Signal::Congested { .. }), sent_ms }
    }

    /// Item Concurrency *Auto*: this item's calls go through the execution's windows (`pool`):
    /// a call to a provider whose window is full waits in line ([`Step::Queue`]).
    pub fn join(&mut self, pool: Rc<RefCell<Pool>>) {
        self.member = pool.borrow_mut().join();
        self.pool = Some(pool);
    }

    /// Its number in the pool (a wake names the items to poll again by it).
    pub fn member(&self) -> u32 {
        self.member
    }

    /// The items of the pool to poll again after this item's last decision or outcome: slots of
    /// a window were granted to them (or it refuses all).
    pub fn take_wake(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.woken)
    }

    /// Each provider's window now, if the item is in a pool (for its run data).
    pub fn windows(&self) -> Option<Vec<u32>> {
        self.pool.as_ref().map(|p| p.borrow().limits())
    }

    /// Give a call's window slot back with what its outcome said; the items in line to wake.
    /// Returns what it taught the window (none without a slot).
    pub(super) fn release_slot(&mut self, provider: usize, round: Option<u32>, signal: Signal) -> Option<WindowNews> {
        match (round, &self.pool) {
            (Some(round), Some(pool)) => Some(pool.borrow_mut().release(provider, round, signal, &mut self.woken)),
            _ => None,
        }
    }

    /// Asks the provider's window for a slot (a probe does not wait for one: it is the breaker's
    /// one call). `None`: no pool.
    fn admit(&mut self, provider: usize, probe: bool) -> Option<Admit> {
        let pool = self.pool.as_ref().filter(|_| !probe)?;
        let admit = pool.borrow_mut().admit(provider, self.member, &mut self.woken);
        if self.came_from == Some(provider) && admit != Admit::Refuse {
            self.came_from = None; // its slot taken, or back in line
        }
        if admit == Admit::Wait {
            self.queued_for = Some(provider);
        }
        Some(admit)
    }

    /// Why a window that refuses skips its provider: the threshold spent on failures opened
    /// the breaker (what Item Concurrency 1 says of it too); spent on 429s alone, its rate gate
    /// closed.
    fn refused(&self, provider: usize, now: u64, views: &[ProviderView]) -> (Reason, u64) {
        let failed = self.pool.as_ref().is_some_and(|p| p.borrow().refused_for_failures(provider));
        let view = &views[provider];
        if failed {
            return breaker::spent_skip(&view.breaker, &self.chain.providers[provider].breaker, now);
        }
        let until = view.gate.closed_until_ms.max(now.saturating_add(self.chain.backoff.cap_ms));
        (Reason::RateLimited, until)
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
            window_round: None,
            // Its check took a share of one call of the fleet's limit: the report gives it back.
            seat: chain_bounds(&m.chain, provider),
            tokens: None,
            continues: None,
        });
        m
    }

    /// The admitted call's hold on its provider's spend cap (its check's), released with its
    /// outcome; a report carries no usage, so the tokens it reserved stand at their estimate.
    pub fn holding(&mut self, held_micros: u64) {
        if let Some(p) = self.pending.first_mut().filter(|_| held_micros > 0) {
            let estimate = (0, 0);
            p.tokens = Some(Reservation { at_ms: p.at_ms, tokens: 0, input: 0, output: 0, estimate, held_micros });
        }
    }

    /// What the call out to `provider` reserved of its tokens and spend cap (a guard's ticket
    /// carries it to its report).
    pub fn reserved(&self, provider: usize) -> Option<Reservation> {
        self.pending.iter().rev().find(|p| p.provider == provider).and_then(|p| p.tokens)
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

    fn remaining(&self, now: u64) -> u64 {
        (self.started_ms + self.chain.budget_ms).saturating_sub(now)
    }

    fn finish(&mut self, step: Step) -> Poll {
        self.finished = Some(step.clone());
        Poll { step, writes: None, transition: None }
    }

    /// The next step, given the providers' shared state read at `now` (the store's clock).
    pub fn poll(&mut self, now: u64, views: &[ProviderView]) -> Result<Poll, EngineError> {
        self.came_from = self.queued_for.take();
        let poll = self.decide(now, views);
        // Woken from a line and gone elsewhere (another provider, a wait, its end): its slot
        // goes to the next in line.
        if let (Some(q), Some(pool)) = (self.came_from.take(), &self.pool) {
            pool.borrow_mut().leave(q, self.member, &mut self.woken);
        }
        poll
    }

    fn decide(&mut self, now: u64, views: &[ProviderView]) -> Result<Poll, EngineError> {
        if let Some(step) = &self.finished {
            return Ok(Poll { step: step.clone(), writes: None, transition: None });
        }
        if views.len() != self.chain.providers.len() {
            return Err(EngineError::InvalidInput(format!(
                "{} provider views for a chain of {}",
                views.len(),
                self.chain.providers.len()
            )));
        }
        // The fleet's learned limits: a congestion seen by another execution lowers this one's
        // windows now; a served window starts from what the fleet learned.
        if let Some(pool) = &self.pool {
            pool.borrow_mut().share(views.iter().map(|v| learned_limit::advice(&v.limit, now)));
        }
        // The worker's shares as the rows say (whether a served call was sent at the full one).
        if let Some(seats) = &self.seats {
            // Split borrows: no copy of the holder's name on every poll.
            let Seats { holder, seats } = &mut *seats.borrow_mut();
            for (i, seat) in seats.iter_mut().enumerate() {
                if let Some(rules) = crate::fleet_limit::rules(&self.chain, i) {
                    seat.read(&views[i].limit, holder, now, rules);
                }
            }
        }
        // A call handed out by a poll whose write lost its race was never made.
        self.drop_uncommitted();
        if !self.pending.is_empty() {
            return Err(EngineError::InvalidInput("a poll while a call is out: hand in its outcome first".into()));
        }
        // A wake a hair early (the node's timers run on the monotonic clock, the store's clock is
        // another) is on time: sleeping the last millisecond would cost a second read of the rows.
        if now.saturating_add(WAKE_SLACK_MS) < self.sleep_until_ms {
            // The rest of a wait scheduled while a hedge was out, counted once.
            self.report.slept_ms += self.sleep_until_ms.saturating_sub(now.max(self.slept_until_ms));
            self.slept_until_ms = self.sleep_until_ms;
            return Ok(Poll {
                step: Step::Sleep { ms: self.sleep_until_ms - now, cause: self.sleep_cause },
                writes: None,
                transition: None,
            });
        }
        // Woken within the slack: decide as of the wait's end (a gate the outcome closed for the
        // same wait is open by then), at most WAKE_SLACK_MS ahead of the store's clock.
        let now = self.tick(now.max(self.sleep_until_ms));
        let remaining = self.remaining(now);
        if remaining == 0 {
            return Ok(self.defer(now, Some((now, Reason::BudgetExhausted))));
        }
        let max_wait = self.chain.retry_after_cap_ms.min(remaining);
        // Every call after this item's first is a retry somewhere (the same provider again, or
        // a fail-over after a failure): it spends from that provider's retry budget.
        let retry = !self.report.attempts.is_empty();
        for (l, p) in self.local.iter_mut().zip(&self.chain.providers) {
            l.retry = retry;
            if let Some(rules) = &p.tokens {
                l.estimate = rules.estimate(self.token_facts.as_ref());
            }
        }
        if let Some(mid) = self.mid_stream {
            return Ok(self.continue_stream(now, views, mid));
        }
        if self.route.is_empty() {
            self.route = route(&self.chain, views, now, &mut self.rng, self.streamed);
            // Only where the routing would scatter a conversation: a configured order already
            // brings every call back to the first provider that can take it.
            if let (Some(p), true) = (self.prefer, self.chain.routing != Routing::Order) {
                self.route.retain(|&i| i != p);
                self.route.insert(0, p);
            }
            // Said in the run data whenever it is not simply the chain as listed.
            let as_listed = self.route.iter().enumerate().all(|(k, &i)| k == i);
            if self.chain.routing != Routing::Order || !as_listed {
                self.report.route = Some(Route { routing: self.chain.routing, order: self.route.clone() });
            }
        }
        // Skips of a poll that ends in a wait are not the item's: it will decide again.
        let skipped_before = self.report.skipped.len();
        let takers = self.takers(&self.holder);
        loop {
            match choose(
                &self.chain,
                &self.route,
                views,
                &self.local,
                &takers,
                now,
                &self.holder,
                max_wait,
                &mut self.report.skipped,
            ) {
                Choice::Call { provider, probe, writes, transition, seat, tokens } => {
                    let slot = match self.admit(provider, probe) {
                        Some(Admit::Wait) => {
                            // Nothing of this choice is written: poll again when a call to it ends.
                            self.report.skipped.truncate(skipped_before);
                            let step = Step::Queue { provider, ms: remaining };
                            return Ok(Poll { step, writes: None, transition: None });
                        }
                        Some(Admit::Refuse) => {
                            self.local[provider].done = Some(self.refused(provider, now, views));
                            continue;
                        }
                        Some(Admit::Go { round }) => Some(round),
                        None => None,
                    };
                    self.local[provider].reserved_at_ms = None;
                    let held = Held { window_round: slot, seat, tokens };
                    let step = self.hand_out(provider, probe, false, held, now, views);
                    return Ok(Poll { step, writes: (!writes.is_empty()).then_some(writes), transition });
                }
                Choice::Reserve { provider, at_ms, writes } => {
                    self.local[provider].reserved_at_ms = Some(at_ms);
                    self.sleep(now, at_ms - now, WaitCause::RateGate);
                    return Ok(Poll {
                        step: Step::Sleep { ms: at_ms - now, cause: WaitCause::RateGate },
                        writes: Some(writes),
                        transition: None,
                    });
                }
                Choice::Nothing { all_permanent: true, .. } => {
                    let reason = self.report.skipped.last().map(|s| s.reason).unwrap_or(Reason::NonRetryable);
                    return Ok(self.finish(Step::Fail { reason }));
                }
                Choice::Nothing { earliest, register, .. } => {
                    if let Some(ms) = self.in_line_for(now, earliest, max_wait) {
                        self.report.skipped.truncate(skipped_before);
                        self.sleep(now, ms, WaitCause::InLine);
                        // Waiting for the fleet's limit: the others hear it and give back.
                        return Ok(Poll {
                            step: Step::Sleep { ms, cause: WaitCause::InLine },
                            writes: register,
                            transition: None,
                        });
                    }
                    return Ok(self.defer(now, earliest));
                }
            }
        }
    }

    /// Wait in line rather than be deferred (`wait_in_line`): when the earliest provider frees
    /// within the item's wait (the Retry-After cap and its budget) from a shared limit that frees
    /// by itself (a rate gate a 429 closed, a full in-flight cap), the wait until then, paced: a
    /// jitter of up to the wait itself (50 ms to 1 s) so the items in line do not call at once.
    fn in_line_for(&mut self, now: u64, earliest: Option<(u64, Reason)>, max_wait: u64) -> Option<u64> {
        let (at, reason) = earliest?;
        let wait = at.saturating_sub(now);
        let frees = matches!(
            reason,
            Reason::RateLimited
                | Reason::InFlightCap
                | Reason::ConcurrencyLimit
                | Reason::TokenLimited
                // Held by the calls out (soon back); a cap spent waits past any budget.
                | Reason::SpendCap
        );
        if !self.chain.wait_in_line || !frees || wait > max_wait {
            return None;
        }
        let paced = wait + self.rng.between(0, wait.clamp(50, 1_000));
        Some(paced.min(self.remaining(now)).max(1))
    }

    /// Calls handed out whose write lost its race were never made: their window slots go back.
    pub(super) fn drop_uncommitted(&mut self) {
        let (kept, dropped): (Vec<Pending>, Vec<Pending>) = self.pending.drain(..).partition(|p| p.committed);
        self.pending = kept;
        for p in dropped {
            self.give_back(&p);
        }
    }

    /// A call that will report no outcome gives back what it holds in memory: its slot of the
    /// execution's window and its count at this worker's seat (its rows' leases lapse).
    fn give_back(&mut self, p: &Pending) {
        self.release_slot(p.provider, p.window_round, Signal::Neutral);
        if let (true, Some(seats)) = (p.seat, &self.seats) {
            seats.borrow_mut().seats[p.provider].end(Signal::Neutral);
        }
    }

    /// The call step for `provider`, now one of the calls out (uncommitted until carried out);
    /// `held`: the slots it holds (its window's, the fleet limit's).
    fn hand_out(
        &mut self,
        provider: usize,
        probe: bool,
        hedge: bool,
        held: Held,
        now: u64,
        views: &[ProviderView],
    ) -> Step {
        let Held { window_round, seat, tokens } = held;
        if let (Some(grew), Some(seats)) = (seat, &self.seats) {
            seats.borrow_mut().seats[provider].sent(grew);
        }
        let call = self.next_call;
        self.next_call += 1;
        self.pending.push(Pending {
            call,
            provider,
            probe,
            at_ms: now,
            hedge,
            committed: false,
            first_chunk_ms: None,
            window_round,
            seat: seat.is_some(),
            tokens,
            continues: self.continuation_due,
        });
        let remaining = self.remaining(now);
        let p = &self.chain.providers[provider];
        let deadline_ms = p.deadline_ms.min(remaining);
        let stream = match self.chain.stream {
            Some(limits) if self.streamed => Some(limits.step(deadline_ms, remaining)),
            _ => None,
        };
        let hedging = self.chain.hedge.map(|h| CallTag {
            call,
            hedge,
            // A streamed call is hedged while it has sent nothing that commits it.
            hedge_after_ms: (!probe && self.hedges_sent() < h.max_hedges && self.repeatable(provider))
                .then(|| h.delay_ms(&views[provider].latency.lane(self.streamed), now))
                .filter(|&d| d < stream.map_or(deadline_ms, |s| s.first_chunk_ms)),
        });
        // Two calls out to one provider are its attempts n and n+1.
        let out_there = self.pending.iter().filter(|q| q.provider == provider && q.call != call).count() as u32;
        let repair = std::mem::take(&mut self.progress[provider].repair_due);
        let continuation = self.continuation_due.take().is_some();
        Step::Call {
            provider,
            name: p.name.clone(),
            attempt: self.progress[provider].attempts + 1 + out_there,
            deadline_ms,
            probe,
            repair,
            continuation,
            idempotency_key: if p.unsafe_method { self.keys[provider].clone() } else { None },
            stream,
            // A continuation is not hedged: part of the answer is out, one model finishes it.
            hedging: hedging.map(|h| CallTag { hedge_after_ms: h.hedge_after_ms.filter(|_| !continuation), ..h }),
        }
    }

    /// `now`, or the latest time this item already decided as of if that is later.
    fn tick(&mut self, now: u64) -> u64 {
        self.clock = self.clock.max(now);
        self.clock
    }

    /// Sending provider `i` the item's request twice cannot act twice (the rules that allow a
    /// retry: a safe method, an idempotency key, or unsafe methods retried by choice).
    fn repeatable(&self, i: usize) -> bool {
        CallFacts { unsafe_method: self.chain.providers[i].unsafe_method, has_idempotency_key: self.keys[i].is_some() }
            .repeatable(&self.chain.rules)
    }

    fn defer(&mut self, now: u64, earliest: Option<(u64, Reason)>) -> Poll {
        let (at, reason) = earliest.unwrap_or((now, Reason::BudgetExhausted));
        // Spread the wake-ups: items deferred by the same outage must not return in lockstep.
        // Saturating: a hint of "forever" (Retry-After past u64 ms) must not wrap into the past.
        let retry_at_ms = at.max(now).saturating_add(self.rng.between(0, self.chain.defer_spread_ms));
        self.finish(Step::Defer { retry_at_ms, reason })
    }

    fn sleep(&mut self, now: u64, ms: u64, cause: WaitCause) {
        self.sleep_until_ms = now + ms;
        self.sleep_cause = cause;
        // With another call of the item still out, the node waits for that call, not this
        // wait: counted (what is left of it) only if a poll comes to wait it out.
        if self.pending.is_empty() {
            self.report.slept_ms += ms;
            self.slept_until_ms = self.sleep_until_ms;
        }
    }

    /// Feed back the outcome of the call the last `poll` returned, with the providers' shared
    /// state as the caller holds it now (read by Fail Over First's dry run only; `&[]` for a call
    /// admitted elsewhere, which has no chain to move on in). Returns what to record in the
    /// provider's shared state; the next `poll` says what the item does next.
    /// `call`: the call's number (its step's `hedging.call`); `None` for the one call out.
    pub fn on_outcome(
        &mut self,
        now: u64,
        outcome: &Outcome,
        views: &[ProviderView],
        call: Option<u32>,
    ) -> Result<Effect, EngineError> {
        self.on_outcome_with_usage(now, outcome, views, call, None)
    }

    /// [`ItemMachine::on_outcome`], with the token usage the answer reported (`token_limit`).
    pub fn on_outcome_with_usage(
        &mut self,
        now: u64,
        outcome: &Outcome,
        views: &[ProviderView],
        call: Option<u32>,
        usage: Option<Usage>,
    ) -> Result<Effect, EngineError> {
        self.on_outcome_with(now, outcome, views, call, CallEnd { usage, delivered_chars: None })
    }

    /// [`ItemMachine::on_outcome`], with what the caller saw of the call's end ([`CallEnd`]).
    pub fn on_outcome_with(
        &mut self,
        now: u64,
        outcome: &Outcome,
        views: &[ProviderView],
        call: Option<u32>,
        end: CallEnd,
    ) -> Result<Effect, EngineError> {
        let usage = end.usage;
        let Some(Pending {
            provider: i,
            probe,
            at_ms,
            hedge,
            call: number,
            first_chunk_ms,
            window_round,
            seat,
            tokens,
            continues,
            ..
        }) = self.take_out(call)
        else {
            return Err(EngineError::InvalidInput("an outcome arrived but no such call was outstanding".into()));
        };
        let holder = self.call_holder(hedge, number);
        if self.finished.is_some() {
            return Err(EngineError::InvalidInput("an outcome after the item ended: abandon the call".into()));
        }
        let now = self.tick(now);
        let chain = self.chain.clone(); // an Arc: the provider read while the item changes
        let p = &chain.providers[i];
        let facts = CallFacts { unsafe_method: p.unsafe_method, has_idempotency_key: self.keys[i].is_some() };
        let c = classify(outcome, facts, &self.chain.rules, now);
        // Part of a streamed answer is out and it broke (or its continuation failed): finished by
        // another call, at once.
        let broke = c.verdict == Verdict::Stop(Reason::StreamBroken);
        let continued = c.verdict != Verdict::Success && self.continue_mid_stream(i, broke, end.delivered_chars, now);
        // The window learns from it: the first byte (a streamed call's first chunk; else the whole
        // answer, the node's HTTP helper gives no earlier time), congestion, a failure.
        let timed_out = matches!(outcome, Outcome::Error { code } if code == crate::outcome::DEADLINE_CODE);
        // A streamed call's time to its first chunk, else the call's whole time.
        let took_ms = first_chunk_ms.unwrap_or(now.saturating_sub(at_ms));
        let signal = Signal::of(&c, timed_out, Some(took_ms));
        let remaining = self.remaining(now);
        let label = match (outcome, outcome.decisive_check()) {
            (_, Some(check)) => format!("check_failed:{check}"),
            (Outcome::Status { status, .. }, None) => status.to_string(),
            (Outcome::Class { class }, None) => format!("{class}XX"),
            (Outcome::Error { code }, None) => code.clone(),
            (Outcome::Broken { code }, None) => format!("stream_broken:{code}"),
        };
        // One repair round for an answer off the schema, where the provider can be asked again.
        let repair_round = c.check == Some(AnswerCheck::Schema) && p.repairs && !self.progress[i].repaired;
        // A status other than success with no usage: the vendor refused the call, processed nothing.
        let refused = matches!(outcome, Outcome::Status { status, .. } if !(200..300).contains(status));
        let headers = match outcome {
            Outcome::Status { headers, .. } => Some(headers),
            _ => None,
        };
        let tokens = self.settle_tokens(i, tokens, usage.as_ref(), refused, headers, now);
        let p = &self.chain.providers[i];
        let progress = &mut self.progress[i];
        progress.attempts += 1;
        let attempt = progress.attempts;
        let mut effect = Effect {
            provider: i,
            health: c.health,
            holder,
            label: label.clone(),
            gate_close_until_ms: None,
            release_in_flight: self.chain.lease_cap(i).is_some(),
            // An answer's duration, and a timeout's (a slow sample); a refused connection is
            // no measure of how fast a provider answers.
            latency_ms: (self.chain.tracks_latency() && (c.health == Health::Success || timed_out)).then_some(took_ms),
            // A streamed call's sample is its time to the first chunk (or all it waited for one).
            first_chunk: self.streamed,
            sample: call_sample(&self.holder, attempt),
            window: None,
            seat: None,
            tokens,
        };
        let mut log = AttemptLog {
            provider: i,
            name: p.name.clone(),
            attempt,
            outcome: label,
            probe,
            wait_ms: 0,
            wait_cause: None,
            retry_after: c.hint.is_some_and(|h| h.source.is_retry_after()),
            health: c.health,
            hedge,
            check: c.check,
            errors: match outcome {
                Outcome::Status { answer: Some(a), .. } if c.check == Some(AnswerCheck::Schema) => {
                    a.schema_errors.clone()
                }
                _ => Vec::new(),
            },
            // Usage an answer reported is counted where no token limit reserved any too.
            tokens: tokens
                .map(|s| s.used)
                .or_else(|| usage.map(|u| Used { input: u.input, output: u.output, ..Used::default() })),
            continued_after_chars: continues,
        };
        match c.verdict {
            _ if continued => {}
            Verdict::Success => {
                if let Some(h) = c.hint {
                    // The quota is spent: every worker waits for its reset, not just the next call.
                    effect.gate_close_until_ms = Some(now.saturating_add(h.delay_ms));
                }
                // A fallback: served by another provider than the item's first choice.
                let first = self.route.first().copied().unwrap_or(0);
                let checks = match outcome {
                    Outcome::Status { answer: Some(a), .. } => a.passed().into_iter().map(String::from).collect(),
                    _ => Vec::new(),
                };
                let step = Step::Done { provider: i, name: p.name.clone(), fallback: i != first, checks };
                self.finished = Some(step);
            }
            Verdict::Stop(Reason::ContextTooLong) if !self.chain.next_provider_when_input_too_long => {
                // The same input is too long for the next provider too, unless the user chose
                // a chain that grows in context: end here.
                self.finished = Some(Step::Fail { reason: Reason::ContextTooLong });
            }
            Verdict::Stop(Reason::StreamBroken) => {
                // Part of this model's answer reached the caller: no other model may continue it.
                self.finished = Some(Step::Fail { reason: Reason::StreamBroken });
            }
            Verdict::Stop(Reason::NonRetryable) if c.client_error && !self.chain.next_provider_on_client_error => {
                // The chain says our request is bad on every provider (a chat model's 400): end
                // here instead of sending it to the next one.
                self.finished = Some(Step::Fail { reason: Reason::NonRetryable });
            }
            Verdict::Stop(Reason::CheckFailed) if repair_round => {
                // One repair round: the same provider, asked again with the validation errors,
                // before the chain moves on (a call of its own, counted as one).
                self.progress[i].repaired = true;
                self.progress[i].repair_due = true;
            }
            Verdict::Stop(reason) => self.local[i].done = Some((reason, now)),
            Verdict::Retry => {
                let delay = retry::retry_delay(&c, &self.chain, attempt, progress.prev_delay_ms, &mut self.rng);
                let at = Standing { attempt, max_attempts: p.max_attempts, now, remaining_ms: remaining };
                let d = retry::decide(&self.chain, &c, delay, at, || self.another_admissible_now(i, now, views));
                effect.gate_close_until_ms = d.gate_close_until_ms;
                match d.retry {
                    Retry::Leave { reason, until_ms } => self.local[i].done = Some((reason, until_ms)),
                    Retry::Wait { delay_ms, cause } => {
                        self.progress[i].prev_delay_ms = delay_ms;
                        self.sleep(now, delay_ms, cause);
                        log.wait_ms = delay_ms;
                        log.wait_cause = Some(cause);
                    }
                }
            }
        }
        self.report.attempts.push(log);
        effect.window = self.release_slot(i, window_round, signal);
        if seat {
            effect.seat = Some(self.leave_seat(&effect.holder.clone(), at_ms, i, signal));
        }
        Ok(effect)
    }

    /// A streamed answer broke after part of it reached the caller (`broke`), or a call asked to
    /// continue it failed: with `continue_broken_streams`, the provider is done for the item and
    /// the next poll hands out a continuation call at once. Returns whether it took the outcome.
    fn continue_mid_stream(&mut self, i: usize, broke: bool, delivered: Option<u64>, now: u64) -> bool {
        if !(self.chain.continue_broken_streams && self.streamed && (broke || self.mid_stream.is_some())) {
            return false;
        }
        let m = self.mid_stream.get_or_insert(MidStream { delivered_chars: 0, last_broken: i, calls: 0 });
        if broke {
            m.last_broken = i;
            m.delivered_chars = m.delivered_chars.max(delivered.unwrap_or_default());
        }
        self.local[i].done = Some((Reason::StreamBroken, now));
        // The continuation's first chunk is the one that commits it (hedging's first-to-commit).
        self.committed_to = None;
        true
    }

    /// The continuation call of a broken stream: the next admissible model of the route other
    /// than those done for the item, or else the one that broke last if its breaker admits it,
    /// now (nothing waits: part of the answer is out); none: the item ends `stream_broken`.
    fn continue_stream(&mut self, now: u64, views: &[ProviderView], mut mid: MidStream) -> Poll {
        if mid.calls >= max_continuations(&self.chain) {
            return self.finish(Step::Fail { reason: Reason::StreamBroken });
        }
        let takers = self.takers(&self.holder);
        let mut skips = Vec::new();
        let mut choice =
            choose(&self.chain, &self.route, views, &self.local, &takers, now, &self.holder, 0, &mut skips);
        if !matches!(choice, Choice::Call { .. }) {
            let mut local = self.local.clone();
            local[mid.last_broken].done = None;
            let again = [mid.last_broken];
            choice = choose(&self.chain, &again, views, &local, &takers, now, &self.holder, 0, &mut skips);
        }
        self.report.skipped.extend(skips);
        let Choice::Call { provider, probe, writes, transition, seat, tokens } = choice else {
            return self.finish(Step::Fail { reason: Reason::StreamBroken });
        };
        mid.calls += 1;
        self.mid_stream = Some(mid);
        self.continuation_due = Some(mid.delivered_chars);
        let held = Held { window_round: None, seat, tokens };
        let step = self.hand_out(provider, probe, false, held, now, views);
        Poll { step, writes: (!writes.is_empty()).then_some(writes), transition }
    }

    /// Fail over first: whether the next poll would call another provider now, were `failed`
    /// done for this item. The same [`choose`] on `views`, as a dry run: a scratch skip list,
    /// nothing written; a slot reserved later on the rate gate is not "now".
    fn another_admissible_now(&self, failed: usize, now: u64, views: &[ProviderView]) -> bool {
        if views.len() != self.chain.providers.len() {
            return false; // never polled: one call admitted elsewhere (the guard)
        }
        let mut local = self.local.clone();
        local[failed].done = Some((Reason::FailedOver, now));
        let max_wait = self.chain.retry_after_cap_ms.min(self.remaining(now));
        let takers = self.takers(&self.holder);
        let choice =
            choose(&self.chain, &self.route, views, &local, &takers, now, &self.holder, max_wait, &mut Vec::new());
        matches!(choice, Choice::Call { .. })
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
    crate::fleet_limit::rules(chain, i).is_some()
}

/// A call among all the fleet's, as a number: its item's holder (FNV-1a, a stable spread of a
/// short text over u64, no hasher state, no randomness) mixed with its number `n` (the attempt,
/// or a hedging item's call). Which calls deposit into the retry budget, without drawing from the
/// item's randomness.
fn call_sample(holder: &str, n: u32) -> u64 {
    let h = holder.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    h ^ u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}
