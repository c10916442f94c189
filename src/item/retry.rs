//! A retryable outcome on one provider (the classifier's `Verdict::Retry`): wait and call it
//! again, or be done with it for this item and until when; and whether every worker is held back
//! from it (a 429, or a hint longer than the item may wait). The retry ladder, in order: a hint
//! past the Retry-After cap, the provider's attempts spent, a wait past the item's budget, Fail
//! Over First with another provider admissible now; else the wait.
use super::types::WaitCause;
use crate::config::Chain;
use crate::rng::Rng;
use crate::verdict::outcome::Classification;
use crate::verdict::reason::Reason;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Wait `delay_ms`, then call the same provider again.
    Wait { delay_ms: u64, cause: WaitCause },
    /// This item is done with the provider: `reason`, and when it would be worth trying again.
    Leave { reason: Reason, until_ms: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryDecision {
    pub retry: Retry,
    /// Close the provider's shared gate until then, for every worker.
    pub gate_close_until_ms: Option<u64>,
}

/// The wait a retry would take: the provider's hint if it gave one, else the backoff's delay for
/// retry `attempt` (`prev_delay_ms`: the provider's last wait, for decorrelated jitter).
pub fn retry_delay(
    c: &Classification,
    chain: &Chain,
    attempt: u32,
    prev_delay_ms: u64,
    rng: &mut Rng,
) -> (u64, WaitCause) {
    match c.hint {
        Some(h) => {
            let cause = if h.source.is_retry_after() { WaitCause::RetryAfter } else { WaitCause::RateLimitReset };
            (h.delay_ms, cause)
        }
        None => (chain.backoff.delay(attempt - 1, prev_delay_ms, rng), WaitCause::Backoff),
    }
}

/// Where the item stands on the provider when its outcome came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// The attempts on this provider counted against its `max_attempts`, the one just answered
    /// included (a 429 to a call that probed the fleet's limit is not counted).
    pub attempt: u32,
    pub max_attempts: u32,
    pub now: u64,
    /// The item's budget left.
    pub remaining_ms: u64,
    /// The call grew the fleet's limit: it probed the vendor's capacity.
    pub probed_limit: bool,
}

/// `another_now`: Fail Over First's dry run, asked only when it decides.
pub fn decide(
    chain: &Chain,
    c: &Classification,
    (delay_ms, cause): (u64, WaitCause),
    s: Standing,
    another_now: impl FnOnce() -> bool,
) -> RetryDecision {
    let Standing { attempt, max_attempts, now, remaining_ms, probed_limit } = s;
    let hint_too_long = c.hint.is_some() && delay_ms > chain.retry_after_cap_ms.min(remaining_ms);
    // Hold every worker back for the full hint (or this delay), not just this item. A 429 to the
    // call that grew the fleet's limit says where the vendor's capacity ends: the limit's cut
    // answers it, and the other workers' calls within the cut limit go on (a closed gate idled
    // the whole fleet at each probe). A hint past the cap closes it all the same.
    let closes = c.closes_gate && !probed_limit || hint_too_long;
    let gate_close_until_ms = closes.then(|| now.saturating_add(delay_ms));
    let leave = |reason, until_ms| Retry::Leave { reason, until_ms };
    let retry = if hint_too_long {
        leave(Reason::RetryAfterExceedsCap, now.saturating_add(delay_ms))
    } else if attempt >= max_attempts {
        // A much longer delay than the schedule before this provider is worth trying again.
        leave(Reason::AttemptsExhausted, now + chain.backoff.cap_ms)
    } else if delay_ms >= remaining_ms {
        leave(Reason::BudgetExhausted, now.saturating_add(delay_ms))
    } else if chain.fail_over_first && another_now() {
        // Move on at once rather than sleep (a backoff or a hint within the cap; a gate the
        // outcome closes stays closed). Not tried again by this item; a later deferral counts it
        // from when the skipped wait would have ended.
        leave(Reason::FailedOver, now.saturating_add(delay_ms))
    } else {
        Retry::Wait { delay_ms, cause }
    };
    RetryDecision { retry, gate_close_until_ms }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ChainConfig, ProviderConfig};
    use crate::facts::retry_after::HintHeaders;
    use crate::verdict::outcome::{classify, CallFacts, Outcome};

    fn chain(fail_over_first: bool) -> Chain {
        let providers = vec![ProviderConfig { name: "a".into(), ..Default::default() }];
        ChainConfig { providers, fail_over_first, ..Default::default() }.validate().unwrap()
    }

    fn retry_of(status: u16, retry_after: Option<&str>) -> Classification {
        let mut headers = HintHeaders::default();
        if let Some(v) = retry_after {
            headers.set("retry-after", Some(v.to_string()));
        }
        classify(&Outcome::status(status, headers), CallFacts::default(), &chain(false).rules, 0)
    }

    #[test]
    fn the_ladder_in_order_cap_attempts_budget_fail_over_then_the_wait() {
        let ch = chain(false);
        let c = retry_of(503, None);
        let at =
            |attempt, remaining_ms| Standing { attempt, max_attempts: 3, now: 1000, remaining_ms, probed_limit: false };
        let d =
            |attempt, remaining, delay| decide(&ch, &c, (delay, WaitCause::Backoff), at(attempt, remaining), || true);
        assert_eq!(d(1, 60_000, 400).retry, Retry::Wait { delay_ms: 400, cause: WaitCause::Backoff });
        assert_eq!(
            d(3, 60_000, 400).retry,
            Retry::Leave { reason: Reason::AttemptsExhausted, until_ms: 1000 + ch.backoff.cap_ms }
        );
        assert_eq!(d(1, 300, 400).retry, Retry::Leave { reason: Reason::BudgetExhausted, until_ms: 1400 });
        assert_eq!(d(1, 60_000, 400).gate_close_until_ms, None, "a 503 without a hint holds nobody back");
        let first = chain(true);
        let moved = decide(&first, &c, (400, WaitCause::Backoff), at(1, 60_000), || true);
        assert_eq!(moved.retry, Retry::Leave { reason: Reason::FailedOver, until_ms: 1400 });
        let stays = decide(&first, &c, (400, WaitCause::Backoff), at(1, 60_000), || false);
        assert_eq!(stays.retry, Retry::Wait { delay_ms: 400, cause: WaitCause::Backoff });
    }

    #[test]
    fn a_429_closes_the_gate_and_a_hint_past_the_cap_leaves_the_provider_for_every_worker() {
        let ch = chain(false);
        let busy = retry_of(429, Some("1"));
        let mut rng = Rng::seeded(1);
        let delay = retry_delay(&busy, &ch, 1, 0, &mut rng);
        assert_eq!(delay, (1000, WaitCause::RetryAfter));
        let at = Standing { attempt: 1, max_attempts: 3, now: 5000, remaining_ms: 60_000, probed_limit: false };
        let d = decide(&ch, &busy, delay, at, || false);
        assert_eq!(d.retry, Retry::Wait { delay_ms: 1000, cause: WaitCause::RetryAfter });
        assert_eq!(d.gate_close_until_ms, Some(6000));
        let long = retry_of(503, Some("3600"));
        let delay = retry_delay(&long, &ch, 1, 0, &mut rng);
        let d = decide(&ch, &long, delay, at, || false);
        assert_eq!(d.retry, Retry::Leave { reason: Reason::RetryAfterExceedsCap, until_ms: 5000 + 3_600_000 });
        assert_eq!(d.gate_close_until_ms, Some(5000 + 3_600_000));
        // The fleet limit's probe: its 429 is the limit's cut to answer, the gate stays open;
        // a hint past the cap still closes it.
        let probe = Standing { probed_limit: true, ..at };
        assert_eq!(decide(&ch, &busy, (1000, WaitCause::RetryAfter), probe, || false).gate_close_until_ms, None);
        let d = decide(&ch, &long, retry_delay(&long, &ch, 1, 0, &mut rng), probe, || false);
        assert_eq!(d.gate_close_until_ms, Some(5000 + 3_600_000));
    }
}
