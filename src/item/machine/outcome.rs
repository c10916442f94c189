//! A call's end handed in: classified, its holds released, its attempt logged, and what the item
//! does next (retry, move on, continue a broken stream, end).
use super::*;
use crate::facts::pace_row::PaceNews;

impl ItemMachine {
    /// Feed back the end of a call: its outcome, and what the caller saw beyond it ([`CallEnd`]:
    /// the usage its answer reported, the characters of a broken stream the caller had), with the
    /// providers' shared state as the caller holds it now (read by Fail Over First's dry run only;
    /// `&[]` for a call admitted elsewhere, which has no chain to move on in). Returns what to
    /// record in the provider's shared state; the next `poll` says what the item does next.
    /// `call`: the call's number (its step's `hedging.call`); `None` for the one call out. The
    /// one way an outcome enters the machine.
    pub fn on_outcome(
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
            paced,
            window_round,
            seat,
            grew,
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
        let timed_out = matches!(outcome, Outcome::Error { code } if code == crate::verdict::outcome::DEADLINE_CODE);
        // A streamed call's time to its first chunk, else the call's whole time.
        let took_ms = first_chunk_ms.unwrap_or(now.saturating_sub(at_ms));
        let signal = Signal::of(&c, timed_out, Some(took_ms));
        // A paced streamed call teaches its provider's pace: its first chunk's time, or the
        // deadline that passed with nothing. One the item's budget cut below the provider's own
        // pace says nothing of it: neither learned nor counted against it.
        let budget_cut = paced.is_some_and(|(_, short)| short) && timed_out && first_chunk_ms.is_none();
        let pace = paced.and_then(|(applied, _)| match first_chunk_ms {
            Some(ms) => Some(PaceNews::FirstChunk(ms)),
            None if timed_out && !budget_cut => Some(PaceNews::Cut(applied)),
            None => None,
        });
        let health = if budget_cut { Health::Neutral } else { c.health };
        let remaining = self.remaining(now);
        let label = match (outcome, outcome.decisive_check(self.chain.rules.answer_checks)) {
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
            health,
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
            pace,
            // A paced answer that showed its pace teaches the next streams' idle limit.
            pace_gap: end.longest_gap_ms.filter(|_| paced.is_some() && c.verdict == Verdict::Success),
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
            health,
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
            context: match outcome {
                Outcome::Status { body: Some(b), .. } if matches!(c.verdict, Verdict::Stop(Reason::ContextTooLong)) => {
                    crate::facts::context_limit::numbers(b)
                }
                _ => None,
            },
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
                    Outcome::Status { answer: Some(a), .. } => {
                        a.passed(self.chain.rules.answer_checks).into_iter().map(String::from).collect()
                    }
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
                // A 429 to the call that grew the fleet's limit is the fleet's cost of finding the
                // vendor's capacity, not the item's: a retry goes first at the limit, so the same
                // item is often the next probe too (real n8n deferred a few in 400 that way).
                progress.probes_refused += u32::from(grew && c.closes_gate);
                let at = Standing {
                    attempt: attempt - progress.probes_refused,
                    max_attempts: p.max_attempts,
                    now,
                    remaining_ms: remaining,
                    probed_limit: grew,
                };
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
    pub(super) fn continue_mid_stream(&mut self, i: usize, broke: bool, delivered: Option<u64>, now: u64) -> bool {
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
    pub(super) fn continue_stream(&mut self, now: u64, views: &[ProviderView], mut mid: MidStream) -> Poll {
        if mid.calls >= max_continuations(&self.chain) {
            return self.finish(Step::Fail { reason: Reason::StreamBroken });
        }
        let takers = self.takers(&self.holder);
        let mut skips = Vec::new();
        let mut choice =
            choose(&self.chain, &self.route, views, &self.local, &takers, now, &self.holder, 0, None, &mut skips);
        if !matches!(choice, Choice::Call { .. }) {
            let mut local = self.local.clone();
            local[mid.last_broken].done = None;
            let again = [mid.last_broken];
            choice = choose(&self.chain, &again, views, &local, &takers, now, &self.holder, 0, None, &mut skips);
        }
        self.report.skipped.extend(skips);
        let Choice::Call { provider, held } = choice else {
            return self.finish(Step::Fail { reason: Reason::StreamBroken });
        };
        mid.calls += 1;
        self.mid_stream = Some(mid);
        self.continuation_due = Some(mid.delivered_chars);
        self.hand_out(provider, false, held, now, views)
    }

    /// Fail over first: whether the next poll would call another provider now, were `failed`
    /// done for this item. The same [`choose`] on `views`, as a dry run: a scratch skip list,
    /// nothing written; a slot reserved later on the rate gate is not "now".
    pub(super) fn another_admissible_now(&self, failed: usize, now: u64, views: &[ProviderView]) -> bool {
        if views.len() != self.chain.providers.len() {
            return false; // never polled: one call admitted elsewhere (the guard)
        }
        let mut local = self.local.clone();
        local[failed].done = Some((Reason::FailedOver, now));
        let max_wait = self.chain.retry_after_cap_ms.min(self.remaining(now));
        let takers = self.takers(&self.holder);
        let choice = choose(
            &self.chain,
            &self.route,
            views,
            &local,
            &takers,
            now,
            &self.holder,
            max_wait,
            None,
            &mut Vec::new(),
        );
        matches!(choice, Choice::Call { .. })
    }
}
