//! One item driven through the narrow boundary: two calls per attempt. `poll` decides the next
//! step from the rows just read; `outcome` takes the call's outcome and gives back, together,
//! the rows to write, the attempt's log line, how long to wait before the next poll, and the
//! item's end if it ended. The outcome's effect stays here: after a lost compare-and-set race
//! the caller hands in fresh rows (`rerecord`) and gets new writes, nothing else.
use crate::choose::chain::ProviderView;
use crate::config::Chain;
use crate::error::EngineError;
use crate::item::record::record;
use crate::item::{AttemptLog, Counters, Effect, ItemMachine, Poll, Report, Step};
use crate::limits::breaker::Transition;
use crate::report::event;
use crate::rng::Rng;
use crate::rows::read_ahead;
use crate::rows::row_text::{self, RowWrites, ROW_KINDS};
use crate::verdict::outcome::Outcome;
use crate::verdict::reason::Reason;
use serde::Serialize;
use std::sync::Arc;

/// How an item ended, with everything its metadata and the counters need.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct End {
    pub step: Step,
    pub report: Report,
    /// This item's contribution to each provider's counters (index = provider).
    pub counters: Vec<Counters>,
    /// Item Concurrency *Auto*: each provider's window when the item ended (index = provider).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub windows: Option<Vec<u32>>,
}

/// The answer to `poll`. What is `None` is left out of the answer's text: each answer is written
/// here and parsed in JS per call, and most polls have nothing to write and no end.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Polled {
    /// `call` or `sleep` (a reserved rate-gate slot); a final step comes as `end`.
    pub step: Step,
    /// Write these first; if the store refuses them, read again and poll again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writes: Option<RowWrites>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transition: Option<Transition>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<End>,
    /// The rows this poll decided on, or rows read while its call is out, may serve the next
    /// item's decision (`read_ahead`); absent: none may.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_ahead: Option<read_ahead::ReadAhead>,
    /// Item Concurrency *Auto*: the items of the pool to poll again (slots passed on to them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wake: Vec<u32>,
}

/// The answer to `outcome` (and to `rerecord` after a lost race); `None` is left out, as above.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recorded {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writes: Option<RowWrites>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transition: Option<Transition>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<AttemptLog>,
    /// Wait this long before the next poll (0: poll at once). Meaningless once `end` is set,
    /// and while calls are out (a hedging item's: wait for them).
    pub sleep_ms: u64,
    /// The item has ended with these calls still out: abort each and hand it back (`abandon`);
    /// `end` comes with the last.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub abort: Vec<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<End>,
    /// Item Concurrency *Auto*: the items of the pool to poll again (slots granted to them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wake: Vec<u32>,
}

pub struct Session {
    chain: Arc<Chain>,
    machine: ItemMachine,
    /// The rows as last read, plus what this item wrote since.
    views: Vec<ProviderView>,
    /// The last outcome's effect, kept for a re-record on fresh rows.
    effect: Option<Effect>,
    /// When the last outcome was seen (the effect is recorded as of then).
    effect_at: u64,
}

impl Session {
    pub fn new(chain: Arc<Chain>, started_ms: u64, holder: String, keys: Vec<Option<String>>, rng: Rng) -> Self {
        let n = chain.providers.len();
        Session {
            machine: ItemMachine::new(chain.clone(), started_ms, holder, keys, rng),
            chain,
            views: vec![ProviderView::default(); n],
            effect: None,
            effect_at: 0,
        }
    }

    /// The item's end, once it has ended and no call of it is out.
    fn end(&self) -> Option<End> {
        if !self.machine.calls_out().is_empty() {
            return None;
        }
        self.machine.finished().map(|step| End {
            step: step.clone(),
            report: self.machine.report().clone(),
            counters: self.machine.counters(),
            windows: self.machine.windows(),
        })
    }

    /// The fleet's learned limit: this item's calls are made within its worker's seats.
    pub fn seat(&mut self, seats: std::rc::Rc<std::cell::RefCell<crate::limits::seat::Seats>>) {
        self.machine.seat(seats);
    }

    /// The shared store failed: the rows from now on are this process's memory, where the
    /// worker keeps to the safe share it last knew of each fleet limit.
    pub fn on_memory(&mut self) {
        self.machine.on_memory();
    }

    /// Item Concurrency *Auto*: this item's calls go through the execution's windows.
    pub fn join(&mut self, pool: std::rc::Rc<std::cell::RefCell<crate::limits::pool::Pool>>) -> u32 {
        self.machine.join(pool);
        self.machine.member()
    }

    /// The next step from the chain's row texts read at `now` (the store's clock).
    pub fn poll(&mut self, now: u64, rows: &[impl AsRef<str>]) -> Result<Polled, EngineError> {
        let views = row_text::views(rows, self.row_groups())?;
        self.poll_views(now, views)
    }

    /// [`Session::poll`] on rows already decoded (by a [`row_text::RowMemo`]).
    pub fn poll_views(&mut self, now: u64, views: Vec<ProviderView>) -> Result<Polled, EngineError> {
        let views = row_text::with_key_row(views, self.providers());
        self.decide(views, |m, v| m.poll(now, v))
    }

    /// No answer yet to the calls out: a hedge, or what to wait for (see [`ItemMachine::hedge`]),
    /// on the chain's rows read at `now`. `again`: after the last hedge's write lost its race.
    pub fn hedge_views(&mut self, now: u64, views: Vec<ProviderView>, again: bool) -> Result<Polled, EngineError> {
        let views = row_text::with_key_row(views, self.providers());
        self.decide(views, |m, v| m.hedge(now, v, again))
    }

    /// A decision on rows just read: what this item writes is applied to its copy of them.
    fn decide(
        &mut self,
        views: Vec<ProviderView>,
        step: impl FnOnce(&mut ItemMachine, &[ProviderView]) -> Result<Poll, EngineError>,
    ) -> Result<Polled, EngineError> {
        self.views = views;
        self.effect = None;
        let poll = step(&mut self.machine, &self.views)?;
        if let Some(w) = &poll.writes {
            self.apply(w);
        }
        Ok(Polled {
            read_ahead: read_ahead::read_ahead(&poll.step, poll.writes.as_ref()),
            writes: poll.writes.as_ref().map(|w| event::writes(&self.chain, w, poll.transition.as_ref(), None)),
            transition: poll.transition,
            end: self.end(),
            step: poll.step,
            wake: self.machine.take_wake(),
        })
    }

    /// The end of a call out: `call` names it (its step's `hedging.call`), or `None` for the one
    /// call the last poll returned; `end`: what the caller saw beyond its outcome (its usage; the
    /// characters of a broken stream's answer the caller had).
    pub fn outcome(
        &mut self,
        now: u64,
        outcome: &Outcome,
        call: Option<u32>,
        end: crate::item::CallEnd,
    ) -> Result<Recorded, EngineError> {
        let effect = self.machine.on_outcome(now, outcome, &self.views, call, end)?;
        Ok(self.logged(effect, now))
    }

    /// What the item's request is to `provider`, for its calls' token estimate there.
    pub fn provider_tokens(&mut self, provider: usize, facts: crate::limits::token_limit::TokenFacts) {
        self.machine.provider_tokens(provider, facts);
    }

    /// A streamed call's first committing chunk (see [`ItemMachine::commit`]): the calls to abort.
    pub fn commit(&mut self, call: Option<u32>, after_ms: u64) -> Vec<u32> {
        self.machine.commit(call, after_ms)
    }

    /// A call out aborted after the item ended (another call's answer won).
    /// The execution was cancelled: the calls out, to abandon ([`ItemMachine::cancelled`]).
    pub fn cancelled(&mut self) -> Vec<u32> {
        self.machine.cancelled()
    }

    /// A call out, aborted (another's answer won, or the execution was cancelled): recorded as
    /// neither success nor failure.
    pub fn abandon(&mut self, now: u64, call: u32) -> Result<Recorded, EngineError> {
        let effect = self.machine.abandon(now, call)?;
        Ok(self.logged(effect, now))
    }

    /// A call's effect recorded, with the attempt's log line (the one it just added).
    fn logged(&mut self, effect: Effect, now: u64) -> Recorded {
        let attempt = self.machine.report().attempts.last().cloned();
        Recorded { attempt, ..self.record(effect, now) }
    }

    /// The last outcome again, on the provider's fresh row texts after a lost race (and its
    /// key's after them, where the chain has Key Quotas: [`Session::row_groups`]).
    pub fn rerecord(&mut self, now: u64, rows: &[impl AsRef<str>]) -> Result<Recorded, EngineError> {
        let effect = self.effect.take().ok_or_else(|| {
            EngineError::InvalidInput("nothing to record again: no outcome since the last poll".into())
        })?;
        let n = ROW_KINDS.len();
        self.views[effect.provider] = row_text::view(&rows[..n.min(rows.len())])?;
        if rows.len() > n {
            let key = row_text::view(&rows[n..])?;
            self.views.iter_mut().for_each(|v| v.quota.clone_from(&key.quota));
        }
        Ok(self.record(effect, now.max(self.effect_at)))
    }

    /// New rows applied to this item's copy, as the store will once it accepts them: the key's
    /// quota row to every provider's view.
    fn apply(&mut self, w: &crate::rows::Writes) {
        row_text::apply(&mut self.views[w.provider], w);
        if let Some(q) = &w.quota {
            self.views.iter_mut().for_each(|v| v.quota.clone_from(q));
        }
    }

    fn record(&mut self, effect: Effect, now: u64) -> Recorded {
        let rec = record(&self.chain, &self.views[effect.provider], &effect, now);
        if let Some(w) = &rec.writes {
            self.apply(w);
        }
        self.effect = Some(effect);
        self.effect_at = now;
        Recorded {
            writes: rec
                .writes
                .as_ref()
                .map(|w| event::writes(&self.chain, w, rec.transition.as_ref(), rec.spend_cap.as_ref())),
            transition: rec.transition,
            attempt: None,
            sleep_ms: self.machine.wake_at().saturating_sub(now),
            abort: if self.machine.finished().is_some() { self.machine.calls_out() } else { Vec::new() },
            end: self.end(),
            wake: self.machine.take_wake(),
        }
    }

    /// Hand the item back now (the store is unavailable and the node fails closed).
    pub fn defer_now(&mut self, now: u64, reason: Reason) -> End {
        self.machine.defer_now(now, reason);
        self.end().expect("deferred items have ended")
    }

    /// Try this provider first (see [`ItemMachine::prefer`]).
    pub fn prefer(&mut self, provider: usize) -> Result<(), EngineError> {
        self.machine.prefer(provider)
    }

    /// Mark this item's calls as streamed (see [`ItemMachine::stream`]).
    pub fn stream(&mut self) -> Result<(), EngineError> {
        self.machine.stream()
    }

    pub fn providers(&self) -> usize {
        self.chain.providers.len()
    }

    /// The groups of `ROW_KINDS` texts a poll reads: each provider's, then the item's key's
    /// where its chain has Key Quotas (`Engine::row_keys` names them).
    pub fn row_groups(&self) -> usize {
        self.providers() + usize::from(self.chain.quotas.is_some())
    }

    pub fn machine(&self) -> &ItemMachine {
        &self.machine
    }
}
