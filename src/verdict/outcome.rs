//! Outcome classification: is this outcome worth a retry, and does it count against the
//! provider's health? Two separate questions (seed 001: never cool down on your own bugs).
use crate::facts::content_policy::refused_by_policy;
use crate::facts::context_limit::input_too_long;
use crate::facts::retry_after::{hint_with_body, spent_reset, Hint, HintHeaders};
use crate::facts::status_set::StatusSet;
use crate::verdict::answer_check::{AnswerCheck, AnswerChecks, AnswerFacts};
use crate::verdict::reason::Reason;
use serde::{Deserialize, Serialize};

/// What came back from one call, as the node saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    Status {
        status: u16,
        #[serde(default)]
        headers: HintHeaders,
        /// The provider's response check this answer failed, if any. It matters only when the
        /// status says success: then the provider answered, but not usefully.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failed_check: Option<String>,
        /// What the node saw of a success answer, for the answer checks ([`crate::verdict::answer_check`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<AnswerFacts>,
        /// The start of a non-success body (the node sends at most 4 KB), read only for the
        /// context-too-long rule ([`crate::facts::context_limit`]) and a 429's or 503's hint (Gemini's
        /// `retryDelay`, [`crate::facts::retry_after::body_retry_delay`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<String>,
    },
    /// A failure whose status is known only by its class (n8n's "4XX" / "5XX" text): 4 or 5.
    Class { class: u8 },
    /// A network-level failure, by Node's error code (`ECONNRESET`, …) or `TIMEOUT` for our deadline.
    Error { code: String },
    /// A streamed answer that failed after its first committing chunk reached the caller, by
    /// the error's code (`ECONNRESET`, …, or `IDLE_TIMEOUT` / `TIMEOUT` for our stream limits).
    Broken { code: String },
}

impl Outcome {
    pub fn status(status: u16, headers: HintHeaders) -> Outcome {
        Outcome::Status { status, headers, failed_check: None, answer: None, body: None }
    }

    /// A successful status that failed the response check named `check`.
    pub fn check_failed(status: u16, check: &str) -> Outcome {
        Outcome::Status {
            status,
            headers: HintHeaders::default(),
            failed_check: Some(check.to_string()),
            answer: None,
            body: None,
        }
    }

    /// A successful status whose answer the node describes with `answer`.
    pub fn answered(status: u16, answer: AnswerFacts) -> Outcome {
        Outcome::Status {
            status,
            headers: HintHeaders::default(),
            failed_check: None,
            answer: Some(answer),
            body: None,
        }
    }

    /// The failed check that decides this outcome: a success status with a failed response
    /// check (Response Must Contain), or an answer check it failed of those the chain keeps.
    pub fn decisive_check(&self, checks: AnswerChecks) -> Option<&str> {
        match self {
            Outcome::Status { status, failed_check, answer, .. } if (100..400).contains(status) => {
                failed_check.as_deref().or_else(|| answer.as_ref()?.failed(checks).map(AnswerCheck::name))
            }
            _ => None,
        }
    }
}

/// The code of an attempt that ran past the engine's deadline (the node's own timer fired).
pub const DEADLINE_CODE: &str = "TIMEOUT";
/// The code of a stream that sent nothing for longer than its idle limit.
pub const IDLE_TIMEOUT_CODE: &str = "IDLE_TIMEOUT";

/// Network errors that are worth another try (seed 003's list plus our own deadline).
pub const TRANSIENT_ERRORS: &[&str] = &[
    "ECONNRESET",
    "ETIMEDOUT",
    "ECONNREFUSED",
    "EAI_AGAIN",
    "EPIPE",
    "ECONNABORTED",
    DEADLINE_CODE,
    "ESOCKETTIMEDOUT",
    "FETCH_FAILED",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
/// Defaults: the table in `config` (`ChainConfig::default`).
pub struct RetryRules {
    /// Statuses worth another try. Default: 408, 425, 429, 500, 502, 503, 504 (seed 003).
    pub retry_statuses: StatusSet,
    /// Statuses that count against the provider's health. Default: 408 and every 5xx.
    pub health_statuses: StatusSet,
    /// Whether a 429 also counts against health (it always closes the rate gate).
    pub count_429: bool,
    /// Retry POST/PATCH without an Idempotency-Key (only for documented-idempotent endpoints).
    pub retry_unsafe_methods: bool,
    /// Count an answer cut at its token limit or off the schema against the provider (they are
    /// the workflow's prompt, schema or Max Tokens, so by default they are not).
    pub count_answer_misses: bool,
    /// The answer checks the chain keeps (`check_empty`, `check_finish`).
    pub answer_checks: AnswerChecks,
}

/// Facts about the call that the outcome alone does not carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CallFacts {
    /// POST or PATCH: repeating it may act twice.
    pub unsafe_method: bool,
    pub has_idempotency_key: bool,
}

impl CallFacts {
    /// Sending it again cannot act twice, or the user said the endpoint is idempotent.
    pub fn repeatable(self, rules: &RetryRules) -> bool {
        !self.unsafe_method || self.has_idempotency_key || rules.retry_unsafe_methods
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    Success,
    Failure,
    /// Says nothing about the provider (our own 4xx).
    Neutral,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Success,
    Retry,
    /// Do not repeat on this provider; the reason says why.
    Stop(Reason),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Classification {
    pub verdict: Verdict,
    pub health: Health,
    /// A 429: close this provider's shared rate gate for every worker.
    pub closes_gate: bool,
    pub hint: Option<Hint>,
    /// Our own request was refused (400/404/409/422, …: a 4xx neither retried nor counted,
    /// not refused credentials): no use repeating it here; whether another provider may take
    /// it is the chain's choice (`next_provider_on_client_error`).
    pub client_error: bool,
    /// The check that decided the outcome (a success status whose answer was no use, or a 400
    /// saying the vendor's content policy refused the input), decided here once.
    pub check: Option<AnswerCheck>,
}

pub fn classify(outcome: &Outcome, facts: CallFacts, rules: &RetryRules, now_ms: u64) -> Classification {
    let mut c = Classification {
        verdict: Verdict::Success,
        health: Health::Success,
        closes_gate: false,
        hint: None,
        client_error: false,
        check: None,
    };
    match outcome {
        Outcome::Status { status, headers, failed_check, answer, body } => {
            let status = *status;
            if (100..400).contains(&status) {
                // An answer that says the quota is spent (a remaining count of 0 with its reset)
                // still served; the reset closes the provider's shared gate until then.
                c.hint = spent_reset(headers, now_ms).filter(|h| h.delay_ms > 0);
                if failed_check.is_some() {
                    // The provider answered, but not usefully: it failed, and the chain moves on.
                    c.health = Health::Failure;
                    c.verdict = Verdict::Stop(Reason::CheckFailed);
                    c.check = Some(AnswerCheck::RequiredPath);
                } else if let Some(check) = answer.as_ref().and_then(|a| a.failed(rules.answer_checks)) {
                    c.check = Some(check);
                    // The answer is no use: the chain moves on. Whose fault it is decides what it
                    // counts against (seed 001: never cool down on your own bugs).
                    (c.verdict, c.health) = match check {
                        AnswerCheck::ContentPolicy => (Verdict::Stop(Reason::ContentPolicy), Health::Neutral),
                        AnswerCheck::Empty => (Verdict::Stop(Reason::CheckFailed), Health::Failure),
                        _ if rules.count_answer_misses => (Verdict::Stop(Reason::CheckFailed), Health::Failure),
                        _ => (Verdict::Stop(Reason::CheckFailed), Health::Neutral),
                    };
                }
                return c;
            }
            if refused_by_policy(status, body.as_deref()) {
                // The vendor's policy refused this input; another provider may take it.
                c.health = Health::Neutral;
                c.verdict = Verdict::Stop(Reason::ContentPolicy);
                c.check = Some(AnswerCheck::ContentPolicy);
                return c;
            }
            if input_too_long(status, body.as_deref()) {
                // Our input, not the provider's health; the same input fails again here.
                c.health = Health::Neutral;
                c.verdict = Verdict::Stop(Reason::ContextTooLong);
                return c;
            }
            c.hint = hint_with_body(Some(status), headers, body.as_deref(), now_ms);
            c.closes_gate = status == 429;
            c.health = if rules.health_statuses.contains(status) || (status == 429 && rules.count_429) {
                Health::Failure
            } else {
                Health::Neutral
            };
            c.verdict = if status == 401 || status == 403 {
                // Refused credentials: repeating them cannot help, and it is not the provider's fault.
                c.health = Health::Neutral;
                Verdict::Stop(Reason::NonRetryable)
            } else if rules.retry_statuses.contains(status) {
                Verdict::Retry
            } else {
                c.client_error = (400..500).contains(&status) && c.health == Health::Neutral;
                Verdict::Stop(Reason::NonRetryable)
            };
        }
        Outcome::Class { class } => {
            // An unknown status of a class: a 5xx is the provider's and worth another try; a
            // 4xx is our request's, neither repeated nor counted.
            if *class == 5 {
                c.health = Health::Failure;
                c.verdict = Verdict::Retry;
            } else {
                c.health = Health::Neutral;
                c.verdict = Verdict::Stop(Reason::NonRetryable);
                c.client_error = true;
                return c;
            }
        }
        Outcome::Broken { .. } => {
            // The provider failed mid-answer; part of it was delivered, so nothing repeats it.
            c.health = Health::Failure;
            c.verdict = Verdict::Stop(Reason::StreamBroken);
            return c;
        }
        Outcome::Error { code } => {
            // Unknown errors (ENOTFOUND, redirect loops) are not repeated, but the provider failed.
            c.health = Health::Failure;
            c.verdict = if TRANSIENT_ERRORS.contains(&code.as_str()) {
                Verdict::Retry
            } else {
                Verdict::Stop(Reason::NonRetryable)
            };
        }
    }
    if c.verdict == Verdict::Retry && !facts.repeatable(rules) {
        c.verdict = Verdict::Stop(Reason::NonRetryable);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::retry_after::HintSource;

    fn status(s: u16) -> Outcome {
        Outcome::status(s, HintHeaders::default())
    }
    fn get() -> CallFacts {
        CallFacts::default()
    }
    fn run(o: &Outcome, f: CallFacts) -> Classification {
        classify(o, f, &RetryRules::default(), 0)
    }

    #[test]
    fn seed003_retry_matrix() {
        for s in [408, 425, 429, 500, 502, 503, 504] {
            assert_eq!(run(&status(s), get()).verdict, Verdict::Retry, "{s}");
        }
        for s in [400, 404, 409, 422, 401, 403] {
            assert_eq!(run(&status(s), get()).verdict, Verdict::Stop(Reason::NonRetryable), "{s}");
        }
        for code in ["ECONNRESET", "ETIMEDOUT", "EAI_AGAIN", "ECONNREFUSED", "EPIPE", "ECONNABORTED", "TIMEOUT"] {
            assert_eq!(run(&Outcome::Error { code: code.into() }, get()).verdict, Verdict::Retry, "{code}");
        }
    }

    #[test]
    fn four_xx_never_counts_against_the_provider() {
        for s in [400, 401, 403, 404, 409, 422, 429] {
            assert_eq!(run(&status(s), get()).health, Health::Neutral, "{s}");
        }
        for s in [500, 502, 503, 504, 408] {
            assert_eq!(run(&status(s), get()).health, Health::Failure, "{s}");
        }
    }

    #[test]
    fn refused_credentials_are_never_retried_nor_counted() {
        for s in [401, 403] {
            let c = run(&status(s), get());
            assert_eq!((c.verdict, c.health), (Verdict::Stop(Reason::NonRetryable), Health::Neutral), "{s}");
        }
    }

    fn with_body(s: u16, body: &str) -> Outcome {
        Outcome::Status {
            status: s,
            headers: HintHeaders::default(),
            failed_check: None,
            answer: None,
            body: Some(body.into()),
        }
    }

    #[test]
    fn a_400_saying_the_input_is_too_long_is_its_own_reason() {
        let c = run(&with_body(400, r#"{"error":{"code":"context_length_exceeded"}}"#), get());
        assert_eq!((c.verdict, c.health), (Verdict::Stop(Reason::ContextTooLong), Health::Neutral));
        let other = run(&with_body(400, r#"{"error":{"message":"Invalid 'model'"}}"#), get());
        assert_eq!(other.verdict, Verdict::Stop(Reason::NonRetryable), "every other 400 keeps its rule");
        let busy = run(&with_body(503, "maximum context length"), get());
        assert_eq!((busy.verdict, busy.health), (Verdict::Retry, Health::Failure), "a 503 is a 503");
        let limited = run(&with_body(429, "prompt is too long"), get());
        assert_eq!(limited.verdict, Verdict::Retry, "a 429's body is read for its hint only");
    }

    #[test]
    fn a_429s_body_may_carry_the_hint() {
        let gemini = r#"{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"31s"}]}}"#;
        let c = run(&with_body(429, gemini), get());
        assert_eq!(c.hint, Some(Hint { delay_ms: 31_000, source: HintSource::BodyRetryDelay }));
        assert!(c.closes_gate);
        assert_eq!(run(&with_body(500, gemini), get()).hint, None, "a body read only where a rule needs it");
    }

    #[test]
    fn a_client_error_is_a_4xx_neither_retried_nor_counted_nor_refused_credentials() {
        for s in [400, 404, 409, 422] {
            let c = run(&status(s), get());
            assert_eq!(
                (c.verdict, c.health, c.client_error),
                (Verdict::Stop(Reason::NonRetryable), Health::Neutral, true),
                "{s}"
            );
        }
        for s in [401, 403, 408, 429, 500, 503] {
            assert!(!run(&status(s), get()).client_error, "{s}");
        }
        let post = CallFacts { unsafe_method: true, ..get() };
        assert!(!run(&status(429), post).client_error, "a 429 not repeated for want of a key is still a 429");
        assert!(!run(&with_body(400, "prompt is too long"), get()).client_error, "context_too_long has its own rule");
        assert!(!run(&Outcome::Error { code: "ENOTFOUND".into() }, get()).client_error);
        let counted = RetryRules { health_statuses: "404,500-599".parse().unwrap(), ..Default::default() };
        assert!(!classify(&status(404), get(), &counted, 0).client_error, "a 4xx the user counts is the provider's");
    }

    #[test]
    fn a_stream_broken_after_its_first_chunk_counts_once_and_is_never_repeated() {
        for code in ["ECONNRESET", "IDLE_TIMEOUT", "TIMEOUT", "EUNKNOWN"] {
            let c = run(&Outcome::Broken { code: code.into() }, get());
            assert_eq!((c.verdict, c.health), (Verdict::Stop(Reason::StreamBroken), Health::Failure), "{code}");
        }
    }

    #[test]
    fn post_without_idempotency_key_is_not_retried() {
        let post = CallFacts { unsafe_method: true, ..get() };
        assert_eq!(run(&status(503), post).verdict, Verdict::Stop(Reason::NonRetryable));
        assert_eq!(run(&status(503), post).health, Health::Failure, "still the provider's failure");
        let keyed = CallFacts { has_idempotency_key: true, ..post };
        assert_eq!(run(&status(503), keyed).verdict, Verdict::Retry);
    }

    #[test]
    fn a_status_known_only_by_its_class_is_retried_and_counted_only_when_5xx() {
        let c = run(&Outcome::Class { class: 5 }, get());
        assert_eq!((c.verdict, c.health, c.client_error), (Verdict::Retry, Health::Failure, false));
        let c = run(&Outcome::Class { class: 4 }, get());
        assert_eq!((c.verdict, c.health, c.client_error), (Verdict::Stop(Reason::NonRetryable), Health::Neutral, true));
        let post = CallFacts { unsafe_method: true, ..get() };
        assert_eq!(run(&Outcome::Class { class: 5 }, post).verdict, Verdict::Stop(Reason::NonRetryable));
    }

    #[test]
    fn rules_are_configurable() {
        let rules = RetryRules { health_statuses: "408".parse().unwrap(), count_429: true, ..Default::default() };
        assert_eq!(classify(&status(500), get(), &rules, 0).health, Health::Neutral);
        let c = classify(&status(429), get(), &rules, 0);
        assert_eq!((c.health, c.closes_gate), (Health::Failure, true));
    }

    #[test]
    fn a_failed_response_check_decides_only_a_successful_answer() {
        let c = run(&Outcome::check_failed(200, "required_path:choices.0"), get());
        assert_eq!(
            (c.verdict, c.health),
            (Verdict::Stop(Reason::CheckFailed), Health::Failure),
            "answered, but not usefully"
        );
        let busy = Outcome::Status {
            status: 503,
            headers: HintHeaders::default(),
            failed_check: Some("required_path:x".into()),
            answer: Some(AnswerFacts { empty: true, ..Default::default() }),
            body: None,
        };
        assert_eq!(run(&busy, get()).verdict, Verdict::Retry, "a 503 is a 503, whatever its body lacks");
        assert_eq!(busy.decisive_check(AnswerChecks::default()), None);
    }

    fn answered(a: AnswerFacts) -> Outcome {
        Outcome::answered(200, a)
    }

    #[test]
    fn an_empty_answer_counts_against_the_provider_and_the_chain_moves_on() {
        let c = run(&answered(AnswerFacts { empty: true, ..Default::default() }), get());
        assert_eq!((c.verdict, c.health), (Verdict::Stop(Reason::CheckFailed), Health::Failure));
    }

    #[test]
    fn a_schema_miss_or_a_cut_answer_is_the_workflows_unless_the_chain_counts_it() {
        let miss = AnswerFacts {
            schema_checked: true,
            schema_errors: vec![crate::verdict::answer_check::SchemaError {
                path: "/a".into(),
                message: "required".into(),
            }],
            ..Default::default()
        };
        let cut = AnswerFacts { finish: Some("length".into()), ..Default::default() };
        for a in [miss, cut] {
            let c = run(&answered(a.clone()), get());
            assert_eq!((c.verdict, c.health), (Verdict::Stop(Reason::CheckFailed), Health::Neutral), "{a:?}");
            let counted = RetryRules { count_answer_misses: true, ..Default::default() };
            let c = classify(&answered(a.clone()), get(), &counted, 0);
            assert_eq!(c.health, Health::Failure, "{a:?}");
        }
    }

    #[test]
    fn a_refusal_a_filter_or_a_policy_400_moves_on_without_counting() {
        let refused = answered(AnswerFacts { refusal: true, ..Default::default() });
        let filtered = answered(AnswerFacts { finish: Some("SAFETY".into()), ..Default::default() });
        let policy_400 = with_body(400, r#"{"error":{"code":"content_policy_violation"}}"#);
        for o in [refused, filtered, policy_400] {
            let c = run(&o, get());
            assert_eq!(
                (c.verdict, c.health, c.client_error),
                (Verdict::Stop(Reason::ContentPolicy), Health::Neutral, false)
            );
            let counted = RetryRules { count_answer_misses: true, ..Default::default() };
            assert_eq!(classify(&o, get(), &counted, 0).health, Health::Neutral, "never the provider's");
        }
    }

    #[test]
    fn a_good_answer_serves() {
        let c = run(
            &answered(AnswerFacts { finish: Some("stop".into()), schema_checked: true, ..Default::default() }),
            get(),
        );
        assert_eq!((c.verdict, c.health), (Verdict::Success, Health::Success));
    }
}
