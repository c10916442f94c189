//! What an item, a check or a report adds to each provider's counters: one rule for every entry
//! point (Call Chain, the chat model, Check Provider, Report Outcome).
use super::types::AttemptLog;
use crate::verdict::answer_check::AnswerCheck;
use crate::verdict::outcome::Health;
use serde::{Deserialize, Serialize};

/// Seeds 002 and 003's metrics for one provider, as this item contributed to them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Counters {
    pub calls: u32,
    pub failures: u32,
    /// Skipped without a call because its breaker was open or its probes taken.
    pub rejections: u32,
    pub retries: u32,
    pub rate_limited_429: u32,
    /// Items the chain gave up on (deferred or failed), counted on the chain's first provider.
    pub give_ups: u32,
    /// Of those, the items handed back on the deferred output (first provider, as `give_ups`).
    pub deferrals: u32,
    /// Retries not made because the provider's retry budget was spent.
    pub retry_budget_exhausted: u32,
    /// Hedges sent to the provider, and those whose answer served the item.
    pub hedges: u32,
    pub hedge_wins: u32,
    /// Answers that failed each check (`answer_check::CHECK_NAMES`), named as the store keeps
    /// them: `check_failures:<check>`.
    #[serde(rename = "check_failures:required_path", default, skip_serializing_if = "is_zero")]
    pub check_required_path: u32,
    #[serde(rename = "check_failures:empty", default, skip_serializing_if = "is_zero")]
    pub check_empty: u32,
    #[serde(rename = "check_failures:content_policy", default, skip_serializing_if = "is_zero")]
    pub check_content_policy: u32,
    #[serde(rename = "check_failures:cut", default, skip_serializing_if = "is_zero")]
    pub check_cut: u32,
    #[serde(rename = "check_failures:schema", default, skip_serializing_if = "is_zero")]
    pub check_schema: u32,
    /// Tokens as the answers reported them (`token_limit`), input and output.
    #[serde(rename = "tokens:input", default, skip_serializing_if = "is_nil")]
    pub tokens_input: u64,
    #[serde(rename = "tokens:output", default, skip_serializing_if = "is_nil")]
    pub tokens_output: u64,
    /// Tokens settled at their estimate: calls that ended without usage (aborted, broken).
    #[serde(rename = "tokens:estimated", default, skip_serializing_if = "is_nil")]
    pub tokens_estimated: u64,
    /// What the calls cost, in millionths of the user's currency unit.
    #[serde(default, skip_serializing_if = "is_nil")]
    pub spend_micros: u64,
    /// Calls the provider's tokens per minute or spend cap turned away (moved on or deferred).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub token_limited: u32,
    /// Waits in line for the provider's tokens per minute or spend cap (Call Chain's items that
    /// waited their turn rather than moving on or deferring).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub token_waits: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_nil(n: &u64) -> bool {
    *n == 0
}

impl Counters {
    /// One attempt's share: a call, and whether it failed, retried or met a 429. The same rule
    /// for every entry point (Call Chain, the chat model, Report Outcome).
    pub fn count(&mut self, a: &AttemptLog) {
        self.calls += 1;
        self.failures += (a.health == Health::Failure) as u32;
        self.retries += (a.attempt > 1) as u32;
        self.rate_limited_429 += (a.outcome == "429") as u32;
        self.hedges += a.hedge as u32;
        // The hedge's answer won: the item was served by it.
        self.hedge_wins += (a.hedge && a.health == Health::Success) as u32;
        match a.check {
            Some(AnswerCheck::RequiredPath) => self.check_required_path += 1,
            Some(AnswerCheck::Empty) => self.check_empty += 1,
            Some(AnswerCheck::ContentPolicy) => self.check_content_policy += 1,
            Some(AnswerCheck::Cut) => self.check_cut += 1,
            Some(AnswerCheck::Schema) => self.check_schema += 1,
            None => {}
        }
        if let Some(t) = &a.tokens {
            match t.estimated {
                true => self.tokens_estimated += t.input + t.output,
                false => {
                    (self.tokens_input, self.tokens_output) =
                        (self.tokens_input + t.input, self.tokens_output + t.output)
                }
            }
            self.spend_micros += t.cost_micros;
        }
    }
}
