//! A hedging item's extra calls: the hedge itself (one more call while none has answered), the
//! first streamed call to commit, and the calls closed because another's answer won.
use super::{call_sample, ItemMachine, Pending};
use crate::choose::chain::{choose, Choice, ProviderView};
use crate::error::EngineError;
use crate::item::types::{AttemptLog, Effect, Poll, Step, WAKE_SLACK_MS};
use crate::limits::concurrency::Signal;
use crate::verdict::outcome::Health;

impl ItemMachine {
    /// The hedges this item sent, answered or out.
    pub(super) fn hedges_sent(&self) -> u32 {
        (self.report.attempts.iter().filter(|a| a.hedge).count() + self.pending.iter().filter(|p| p.hedge).count())
            as u32
    }

    /// No answer yet to the calls out: one more call, to the provider the routing would choose
    /// next (another one; the same only when no other is admissible), if a hedge is due and the
    /// provider can take it now: admitted without a probe, a rate-gate token and an in-flight
    /// lease at once, and its retry budget. Otherwise `Await`. `again`: after a lost race (the
    /// hedge handed out last was not made; decide on the fresh rows).
    pub fn hedge(&mut self, now: u64, views: &[ProviderView], again: bool) -> Result<Poll, EngineError> {
        if again {
            self.drop_uncommitted();
        } else {
            self.pending.iter_mut().for_each(|p| p.committed = true);
        }
        let Some(h) = self.chain.hedge else {
            return Err(EngineError::InvalidInput("a hedge asked of a chain that does not hedge".into()));
        };
        let (Some(last), None) = (self.pending.last(), &self.finished) else {
            return Err(EngineError::InvalidInput("a hedge asked with no call out".into()));
        };
        if views.len() != self.chain.providers.len() {
            return Err(EngineError::InvalidInput("provider views do not match the chain".into()));
        }
        let wait = |after| Ok(Poll { step: Step::Await { hedge_after_ms: after }, writes: None, transition: None });
        if self.committed_to.is_some() {
            return wait(None); // a streamed call's answer is reaching the caller: it is the one
        }
        let due = last.at_ms.saturating_add(h.delay_ms(&views[last.provider].latency.lane(self.streamed), last.at_ms));
        if self.hedges_sent() >= h.max_hedges || self.remaining(now) == 0 {
            return wait(None);
        }
        if now.saturating_add(WAKE_SLACK_MS) < due {
            return wait(Some(due - now));
        }
        let out: Vec<usize> = self.pending.iter().map(|p| p.provider).collect();
        let holder = self.call_holder(true, self.next_call);
        // A hedge is one more call: it spends from the retry budget as a retry does.
        let takers = self.takers(&holder);
        let mut local = self.local.clone();
        local.iter_mut().for_each(|l| (l.retry, l.reserved_at_ms) = (true, None));
        let others: Vec<usize> = self.route.iter().copied().filter(|i| !out.contains(i)).collect();
        let same: Vec<usize> = self.route.iter().copied().filter(|i| out.contains(i)).collect();
        for mut order in [others, same] {
            order.retain(|&i| self.repeatable(i));
            while !order.is_empty() {
                match choose(&self.chain, &order, views, &local, &takers, now, &holder, 0, None, &mut Vec::new()) {
                    Choice::Call { provider, held } if !held.probe => {
                        return Ok(self.hand_out(provider, true, held, now, views));
                    }
                    // Never a half-open probe, never a wait for a gate slot: skip that provider.
                    Choice::Call { provider, .. } | Choice::Reserve { provider, .. } | Choice::Queue { provider } => {
                        order.retain(|&i| i != provider)
                    }
                    Choice::Nothing { .. } => break,
                }
            }
        }
        wait(None)
    }

    /// A hedging item's streamed call sent its first committing chunk: the first to do so is the
    /// one whose answer reaches the caller. Returns the calls to abort: the others, or this one
    /// when another committed first (or the item ended); nothing of a call aborted here may reach
    /// the caller. Each aborted call is then handed back with [`ItemMachine::abandon`].
    /// `call`: `None` for the one call out; `after_ms`: how long after it started its first
    /// committing chunk came (the node's measure), its provider's time-to-first-chunk sample.
    pub fn commit(&mut self, call: Option<u32>, after_ms: u64) -> Vec<u32> {
        self.pending.iter_mut().for_each(|p| p.committed = true);
        let only = (self.pending.len() == 1).then(|| self.pending[0].call);
        let Some(call) = call.or(only) else { return Vec::new() };
        let known = self.pending.iter().any(|p| p.call == call);
        if let Some(p) = self.pending.iter_mut().find(|p| p.call == call) {
            p.first_chunk_ms.get_or_insert(after_ms);
        }
        match (self.committed_to, &self.finished, known) {
            (None, None, true) => {
                self.committed_to = Some(call);
                self.calls_out().into_iter().filter(|&c| c != call).collect()
            }
            (Some(c), None, _) if c == call => Vec::new(),
            _ => vec![call],
        }
    }

    /// The call out named `call` (or the only one), taken; every call out is carried out by now.
    pub(super) fn take_out(&mut self, call: Option<u32>) -> Option<Pending> {
        self.pending.iter_mut().for_each(|p| p.committed = true);
        let k = match call {
            Some(c) => self.pending.iter().position(|p| p.call == c)?,
            None if self.pending.len() == 1 => 0,
            None => return None,
        };
        Some(self.pending.remove(k))
    }

    /// The name a call's leases are held under: the item's, or a hedge's own.
    pub(super) fn call_holder(&self, hedge: bool, call: u32) -> String {
        if hedge {
            format!("{}#{call}", self.holder)
        } else {
            self.holder.clone()
        }
    }

    /// A call out that lost to another's answer (or outlived its item), aborted: its lease is
    /// freed and its time so far is a latency sample (at least that slow), but it says nothing
    /// about its provider's health. It was a call: it is counted as one.
    pub fn abandon(&mut self, now: u64, call: u32) -> Result<Effect, EngineError> {
        let Some(Pending { provider, probe, at_ms, hedge, window_round, seat, tokens, continues, .. }) =
            self.take_out(Some(call))
        else {
            return Err(EngineError::InvalidInput(format!("no call {call} out to abandon")));
        };
        // What its window says now still tells the fleet (an abandoned call is news of nothing
        // else, but the window may have grown meanwhile).
        let window = self.release_slot(provider, window_round, Signal::Neutral);
        let holder = self.call_holder(hedge, call);
        let seat = seat.then(|| self.leave_seat(&holder, at_ms, provider, Signal::Neutral));
        // Aborted: whatever the vendor did of it, its estimate stands.
        let tokens = self.settle_tokens(provider, tokens, None, false, None, now);
        let progress = &mut self.progress[provider];
        progress.attempts += 1;
        self.report.attempts.push(AttemptLog {
            provider,
            name: self.chain.providers[provider].name.clone(),
            attempt: progress.attempts,
            outcome: "abandoned".into(),
            probe,
            wait_ms: 0,
            wait_cause: None,
            retry_after: false,
            health: Health::Neutral,
            hedge,
            check: None,
            errors: Vec::new(),
            tokens: tokens.map(|s| s.used),
            continued_after_chars: continues,
            context: None,
        });
        Ok(Effect {
            provider,
            health: Health::Neutral,
            holder,
            label: "abandoned".into(),
            gate_close_until_ms: None,
            release_in_flight: self.chain.lease_cap(provider).is_some(),
            latency_ms: self.chain.tracks_latency().then(|| now.saturating_sub(at_ms)),
            first_chunk: self.streamed,
            sample: call_sample(&self.holder, call),
            window,
            seat,
            tokens,
            pace: None,
            pace_gap: None,
        })
    }
}
