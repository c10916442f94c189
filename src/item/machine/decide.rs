//! The item's next step at each poll: its route, the first admissible provider, or a wait (in
//! line, for the rate gate, a backoff), or its end (deferred, failed).
use super::*;
use crate::facts::pace_row;

impl ItemMachine {
    pub(super) fn remaining(&self, now: u64) -> u64 {
        let from = if self.waits_for_its_turn() { now } else { self.started_ms };
        (from + self.chain.budget_ms).saturating_sub(now)
    }

    /// Before its first call, an item that waits its turn (in line at a shared limit, or in its
    /// execution's window) has not started: its budget counts from its first call, as with a
    /// fixed Item Concurrency (a batch of thousands is not spent waiting for its own turn).
    /// A window that refuses ends the turn's wait: its provider served this execution nothing,
    /// and the window opens again only with the next execution (the item is deferred for it).
    fn waits_for_its_turn(&self) -> bool {
        !self.called && !self.refused && (self.chain.wait_in_line || self.pool.is_some())
    }

    /// What is left of its short wait for a fleet limit's slot (0: none, or spent).
    fn slot_wait_left(&self, now: u64) -> u64 {
        let waited = self.slot_wait_from.map_or(0, |from| now.saturating_sub(from));
        self.chain.slot_wait_ms.saturating_sub(waited)
    }

    pub(super) fn finish(&mut self, step: Step) -> Poll {
        self.finished = Some(step.clone());
        Poll { step, writes: None, transition: None }
    }

    /// The next step, given the providers' shared state read at `now` (the store's clock).
    pub fn poll(&mut self, now: u64, views: &[ProviderView]) -> Result<Poll, EngineError> {
        self.came_from = self.queued_for.take();
        let mut poll = self.decide(now, views);
        // Woken from a line and gone elsewhere (another provider, a wait, its end): its slot
        // goes to the next in line.
        if let (Some(q), Some(pool)) = (self.came_from.take(), &self.pool) {
            pool.borrow_mut().leave(q, self.member);
        }
        // A gate slot it reserved and did not take goes back, with a poll that writes nothing else.
        if let Ok(p) = &mut poll {
            if p.writes.is_none() {
                p.writes = self.gate_give_back(now, views);
            }
        }
        poll
    }

    /// The rows that give back the gate slot this item left untaken, if any is left.
    fn gate_give_back(&mut self, now: u64, views: &[ProviderView]) -> Option<crate::rows::Writes> {
        let i = self.gate_given_up.take()?;
        let limit = self.chain.providers[i].rate_limit.as_ref();
        let gate = crate::limits::rate_gate::give_back(&views.get(i)?.gate, limit, now)?;
        Some(crate::rows::Writes { provider: i, gate: Some(gate), ..Default::default() })
    }

    pub(super) fn decide(&mut self, now: u64, views: &[ProviderView]) -> Result<Poll, EngineError> {
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
            let Seats { holder, seats, .. } = &mut *seats.borrow_mut();
            for (i, seat) in seats.iter_mut().enumerate() {
                if let Some(rules) = crate::limits::fleet_limit::rules(&self.chain, i) {
                    seat.read(&views[i].limit, holder, now, rules, !self.on_memory);
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
        // Back from a short wait (`wait_for_slot`): a provider failed over from is free to try
        // again once its wait is over, where nothing else could take the call.
        if self.slot_wait_from.is_some() {
            for l in &mut self.local {
                if l.done.is_some_and(|(reason, until)| reason == Reason::FailedOver && until <= now) {
                    l.done = None;
                }
            }
        }
        let remaining = self.remaining(now);
        if remaining == 0 {
            return Ok(self.defer(now, Some((now, Reason::BudgetExhausted))));
        }
        let max_wait = self.chain.retry_after_cap_ms.min(remaining);
        // Every call after this item's first is a retry somewhere (the same provider again, or
        // a fail-over after a failure): it spends from that provider's retry budget.
        let retry = !self.report.attempts.is_empty();
        let waits_for_slot = self.chain.wait_in_line || self.slot_wait_left(now) > 0;
        for (i, (l, p)) in self.local.iter_mut().zip(&self.chain.providers).enumerate() {
            l.retry = retry;
            l.waits_for_slot = waits_for_slot;
            if let Some(rules) = &p.tokens {
                l.estimate = rules.estimate(self.token_facts.get(i).and_then(Option::as_ref));
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
        let place = self.pool.as_deref().map(|pool| InPool { pool, member: self.member });
        let choice = choose(
            &self.chain,
            &self.route,
            views,
            &self.local,
            &takers,
            now,
            &self.holder,
            max_wait,
            place.as_ref(),
            &mut self.report.skipped,
        );
        // A gate slot due now that this poll does not take (the gate closed since, the breaker
        // opened, another provider answers first): left for the next caller. One woken for too
        // late is past: given back, it would let the next caller go early.
        let called = match choice {
            Choice::Call { provider, .. } => Some(provider),
            _ => None,
        };
        for (i, (l, p)) in self.local.iter_mut().zip(&self.chain.providers).enumerate() {
            let Some(at) = l.reserved_at_ms.filter(|&at| at <= now && called != Some(i)) else { continue };
            l.reserved_at_ms = None;
            if crate::limits::rate_gate::on_time(p.rate_limit.as_ref(), at, now) {
                self.gate_given_up = Some(i);
            }
        }
        // Woken for a slot of this provider: taken now, or back in line; either way not left.
        if let Choice::Call { provider, .. } | Choice::Queue { provider } = choice {
            if self.came_from == Some(provider) {
                self.came_from = None;
            }
        }
        match choice {
            Choice::Call { provider, held } => {
                self.local[provider].reserved_at_ms = None;
                Ok(self.hand_out(provider, false, held, now, views))
            }
            Choice::Queue { provider } => {
                // Nothing of this poll is written: poll again when a call to it ends.
                self.queued_for = Some(provider);
                self.report.skipped.truncate(skipped_before);
                Ok(Poll { step: Step::Queue { provider, ms: remaining }, writes: None, transition: None })
            }
            Choice::Reserve { provider, at_ms, writes } => {
                self.local[provider].reserved_at_ms = Some(at_ms);
                self.sleep(now, at_ms - now, WaitCause::RateGate);
                Ok(Poll {
                    step: Step::Sleep { ms: at_ms - now, cause: WaitCause::RateGate },
                    writes: Some(writes),
                    transition: None,
                })
            }
            Choice::Nothing { all_permanent: true, .. } => {
                let reason = self.report.skipped.last().map(|s| s.reason).unwrap_or(Reason::NonRetryable);
                Ok(self.finish(Step::Fail { reason }))
            }
            Choice::Nothing { earliest, register, turn, .. } => {
                // A window that refuses: the item no longer waits for its turn, its budget runs.
                let refuses = |p: &Rc<RefCell<Pool>>| self.route.iter().any(|&i| p.borrow().refuses(i));
                if self.waits_for_its_turn() && self.pool.as_ref().is_some_and(refuses) {
                    self.started_ms = self.started_ms.max(now);
                    self.refused = true;
                }
                if let Some(ms) = self.in_line_for(now, earliest, max_wait) {
                    self.count_token_waits(skipped_before);
                    self.report.skipped.truncate(skipped_before);
                    let step = match turn {
                        // In turn at the fleet's limit: woken as a call of the execution ends.
                        Some(provider) => {
                            self.came_from = self.came_from.filter(|&q| q != provider);
                            self.queued_for = Some(provider);
                            Step::Queue { provider, ms }
                        }
                        None => {
                            self.sleep(now, ms, WaitCause::InLine);
                            Step::Sleep { ms, cause: WaitCause::InLine }
                        }
                    };
                    // Waiting for the fleet's limit: the others hear it and give back.
                    return Ok(Poll { step, writes: register, transition: None });
                }
                Ok(self.defer(now, earliest))
            }
        }
    }

    /// Wait in line rather than be deferred (`wait_in_line`): when the earliest provider frees
    /// within the item's wait (the Retry-After cap and its budget) from a shared limit that frees
    /// by itself (a rate gate a 429 closed, a full in-flight cap), the wait until then, paced: a
    /// jitter of up to the wait itself (50 ms to 1 s) so the items in line do not call at once.
    /// Without a line, the short wait for a fleet limit's slot (`wait_for_slot`) while it lasts.
    pub(super) fn in_line_for(&mut self, now: u64, earliest: Option<(u64, Reason)>, max_wait: u64) -> Option<u64> {
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
                // A minute's quota frees within the wait; a day's or a month's defers.
                | Reason::KeyQuota
        );
        // A chain that does not wait in line still waits a short while where every provider is
        // at a limit that frees (`wait_for_slot`): a fleet limit's slot, a gate a 429 closed, or
        // the wait a provider was failed over from (it is tried again after it, as a last resort).
        let for_slot = (frees || reason == Reason::FailedOver) && self.slot_wait_left(now) > 0;
        if !(self.chain.wait_in_line && frees || for_slot) || wait > max_wait {
            return None;
        }
        if for_slot && !self.chain.wait_in_line {
            self.slot_wait_from.get_or_insert(now);
        }
        let paced = wait + self.rng.between(0, wait.clamp(50, 1_000));
        Some(paced.min(self.remaining(now)).max(1))
    }

    /// The call to `provider`, now one of the calls out (uncommitted until carried out), with
    /// the rows its limits' reservations write; `held`: what they reserved (its window's slot,
    /// the fleet limit's, its tokens).
    pub(super) fn hand_out(
        &mut self,
        provider: usize,
        hedge: bool,
        held: admit::Held,
        now: u64,
        views: &[ProviderView],
    ) -> Poll {
        let admit::Held { writes, probe, transition, seat, tokens, window_round } = held;
        // A call out: its next wait for a slot is a wait of its own.
        self.slot_wait_from = None;
        if self.waits_for_its_turn() {
            self.started_ms = self.started_ms.max(now);
        }
        self.called = true;
        if let (Some(grew), Some(seats)) = (seat, &self.seats) {
            seats.borrow_mut().seats[provider].sent(grew);
        }
        let remaining = self.remaining(now);
        let deadline_ms = self.chain.providers[provider].deadline_ms.min(remaining);
        // A streamed call's limits. Where the chain learns each model's pace, its first-chunk
        // deadline is the pace's; the call keeps it, and whether the item's budget cut it below.
        let (stream, paced) = match self.chain.stream {
            Some(limits) if self.streamed => {
                let pace = limits
                    .learn_pace
                    .then(|| pace_row::first_chunk_ms(&views[provider].pace, now, limits.first_chunk_ms));
                let idle = if limits.learn_pace { pace_row::idle_ms(&views[provider].pace, now) } else { 0 };
                let step = limits.step(deadline_ms, remaining, pace.unwrap_or(limits.first_chunk_ms), idle);
                (Some(step), pace.map(|ms| (step.first_chunk_ms, ms > remaining)))
            }
            _ => (None, None),
        };
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
            paced,
            window_round,
            seat: seat.is_some(),
            grew: seat == Some(true),
            tokens,
            continues: self.continuation_due,
        });
        let p = &self.chain.providers[provider];
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
        let step = Step::Call {
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
        };
        Poll { step, writes: (!writes.is_empty()).then_some(writes), transition }
    }

    /// `now`, or the latest time this item already decided as of if that is later.
    pub(super) fn tick(&mut self, now: u64) -> u64 {
        self.clock = self.clock.max(now);
        self.clock
    }

    /// Sending provider `i` the item's request twice cannot act twice (the rules that allow a
    /// retry: a safe method, an idempotency key, or unsafe methods retried by choice).
    pub(super) fn repeatable(&self, i: usize) -> bool {
        CallFacts { unsafe_method: self.chain.providers[i].unsafe_method, has_idempotency_key: self.keys[i].is_some() }
            .repeatable(&self.chain.rules)
    }

    pub(super) fn defer(&mut self, now: u64, earliest: Option<(u64, Reason)>) -> Poll {
        let (at, reason) = earliest.unwrap_or((now, Reason::BudgetExhausted));
        // Spread the wake-ups: items deferred by the same outage must not return in lockstep.
        // Saturating: a hint of "forever" (Retry-After past u64 ms) must not wrap into the past.
        let retry_at_ms = at.max(now).saturating_add(self.rng.between(0, self.chain.defer_spread_ms));
        self.finish(Step::Defer { retry_at_ms, reason })
    }

    pub(super) fn sleep(&mut self, now: u64, ms: u64, cause: WaitCause) {
        self.sleep_until_ms = now + ms;
        self.sleep_cause = cause;
        // With another call of the item still out, the node waits for that call, not this
        // wait: counted (what is left of it) only if a poll comes to wait it out.
        if self.pending.is_empty() {
            self.report.slept_ms += ms;
            self.slept_until_ms = self.sleep_until_ms;
        }
    }
}
