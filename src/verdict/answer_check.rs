//! Answer checks: a success status whose answer is no use (seed 001: "a fallback that silently
//! degrades quality is worse than a fallback that fails loudly"). The node hands over what the
//! answer was, as the vendor said it (its finish word, a refusal, no text and no tool call, the
//! schema validator's errors); which check failed and what it counts against is decided here.
use serde::{Deserialize, Serialize};

/// What the node saw of a success answer. Every field as the vendor or the validator said it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct AnswerFacts {
    /// Neither text nor a tool call.
    pub empty: bool,
    /// The vendor's finish word as it came (`finish_reason`, `stop_reason`, `finishReason`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish: Option<String>,
    /// The vendor marked the answer a refusal (OpenAI's `message.refusal`).
    pub refusal: bool,
    /// The answer was checked against the chain's JSON Schema.
    pub schema_checked: bool,
    /// What the schema validator reported (empty: the answer satisfies it). An answer that is
    /// not JSON at all is one error at the root.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schema_errors: Vec<SchemaError>,
}

/// One validation error: where in the answer (a JSON pointer, "" for the root) and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SchemaError {
    pub path: String,
    pub message: String,
}

/// The checks by the names they are counted under, in the order Get Metrics lists them.
pub const CHECK_NAMES: [&str; 5] = ["required_path", "empty", "content_policy", "cut", "schema"];

/// The check an answer failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerCheck {
    /// Response Must Contain: the body lacked its dot path. Counted against the provider.
    RequiredPath,
    /// Nothing came back: the provider's fault, counted against it.
    Empty,
    /// The model refused, or the vendor's filter stopped the answer: content policy, another
    /// provider may take it; never counted against this one.
    ContentPolicy,
    /// Cut at the token limit: this workflow's Max Tokens, not the provider's health.
    Cut,
    /// The answer breaks the schema this workflow asked for: this workflow's prompt or schema.
    Schema,
}

impl AnswerCheck {
    /// The name a failed check is logged, counted and documented by.
    pub fn name(self) -> &'static str {
        match self {
            AnswerCheck::RequiredPath => "required_path",
            AnswerCheck::Empty => "empty",
            AnswerCheck::ContentPolicy => "content_policy",
            AnswerCheck::Cut => "cut",
            AnswerCheck::Schema => "schema",
        }
    }

    /// Whether this failure is about the workflow (its prompt, schema, Max Tokens) rather than
    /// the provider: counted against the provider only when the chain says so.
    pub fn is_the_workflows(self) -> bool {
        matches!(self, AnswerCheck::Cut | AnswerCheck::Schema)
    }
}

/// Finish words that mean the answer was cut at its token limit (OpenAI, Mistral, Groq, Ollama:
/// `length`; Anthropic, Bedrock: `max_tokens`; Gemini: `MAX_TOKENS`; OpenAI Responses:
/// `max_output_tokens`). Compared ignoring case.
pub const CUT_WORDS: &[&str] = &["length", "max_tokens", "max_output_tokens", "model_length"];

/// Finish words that mean a filter or a refusal stopped the answer (OpenAI, Azure, Mistral:
/// `content_filter`; Gemini: `SAFETY`, `RECITATION`, `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`,
/// `IMAGE_SAFETY`; Anthropic: `refusal`; Bedrock: `guardrail_intervened`, `content_filtered`).
pub const POLICY_WORDS: &[&str] = &[
    "content_filter",
    "content_filtered",
    "safety",
    "recitation",
    "blocklist",
    "prohibited_content",
    "spii",
    "image_safety",
    "refusal",
    "guardrail_intervened",
];

fn is_one_of(word: &str, words: &[&str]) -> bool {
    words.iter().any(|w| w.eq_ignore_ascii_case(word))
}

/// Which answer checks a chain keeps: the node's version and its Answer Check say (the schema is
/// checked wherever one is set). Both on by default: facts handed over are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerChecks {
    /// An answer with neither text nor a tool call fails (`empty`).
    pub empty: bool,
    /// The finish word and a refusal are read (`content_policy`, `cut`): *Fail Over on Cut,
    /// Filtered or Refused Answers*.
    pub finish: bool,
}

impl Default for AnswerChecks {
    fn default() -> Self {
        AnswerChecks { empty: true, finish: true }
    }
}

impl AnswerFacts {
    /// The check this answer fails, the first in order of what it says about the answer: a
    /// refusal or filter (whatever text came with it), nothing at all, cut short, off-schema;
    /// only among the checks the chain keeps.
    pub fn failed(&self, checks: AnswerChecks) -> Option<AnswerCheck> {
        let finish = if checks.finish { self.finish.as_deref().unwrap_or("") } else { "" };
        if (checks.finish && self.refusal) || is_one_of(finish, POLICY_WORDS) {
            return Some(AnswerCheck::ContentPolicy);
        }
        if checks.empty && self.empty {
            return Some(AnswerCheck::Empty);
        }
        if is_one_of(finish, CUT_WORDS) {
            return Some(AnswerCheck::Cut);
        }
        if !self.schema_errors.is_empty() {
            return Some(AnswerCheck::Schema);
        }
        None
    }

    /// The checks a served answer passed, by name: those the chain keeps (the schema only when
    /// there was one).
    pub fn passed(&self, checks: AnswerChecks) -> Vec<&'static str> {
        let mut v = Vec::new();
        if checks.empty {
            v.push("not_empty");
        }
        if checks.finish {
            v.extend(["not_cut", "not_refused"]);
        }
        if self.schema_checked {
            v.push("schema");
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finish(w: &str) -> AnswerFacts {
        AnswerFacts { finish: Some(w.into()), ..Default::default() }
    }

    #[test]
    fn a_check_the_chain_does_not_keep_is_not_failed_though_its_fact_came() {
        let no_finish = AnswerChecks { empty: true, finish: false };
        assert_eq!(finish("length").failed(no_finish), None);
        let refused = AnswerFacts { refusal: true, ..Default::default() };
        assert_eq!(refused.failed(no_finish), None);
        // Finish words off, an empty answer still fails: the chat model's empty check stays.
        let empty = AnswerFacts { empty: true, ..finish("stop") };
        assert_eq!(empty.failed(no_finish), Some(AnswerCheck::Empty));
        assert_eq!(empty.failed(AnswerChecks { empty: false, finish: true }), None);
        let off_schema = AnswerFacts { schema_errors: vec![SchemaError::default()], ..Default::default() };
        assert_eq!(off_schema.failed(AnswerChecks { empty: false, finish: false }), Some(AnswerCheck::Schema));
        // A served answer says only the checks the chain kept.
        assert_eq!(empty.passed(no_finish), ["not_empty"]);
        assert!(empty.passed(AnswerChecks { empty: false, finish: false }).is_empty());
    }

    #[test]
    fn each_vendors_finish_word_is_read_as_its_check() {
        for w in ["length", "max_tokens", "MAX_TOKENS", "max_output_tokens"] {
            assert_eq!(finish(w).failed(AnswerChecks::default()), Some(AnswerCheck::Cut), "{w}");
        }
        for w in ["content_filter", "SAFETY", "RECITATION", "refusal", "PROHIBITED_CONTENT", "guardrail_intervened"] {
            assert_eq!(finish(w).failed(AnswerChecks::default()), Some(AnswerCheck::ContentPolicy), "{w}");
        }
        for w in ["stop", "end_turn", "STOP", "tool_calls", "tool_use", ""] {
            assert_eq!(finish(w).failed(AnswerChecks::default()), None, "{w}");
        }
    }

    #[test]
    fn a_refusal_outranks_an_empty_answer_and_an_empty_one_a_schema_miss() {
        let refused = AnswerFacts { refusal: true, empty: true, ..Default::default() };
        assert_eq!(refused.failed(AnswerChecks::default()), Some(AnswerCheck::ContentPolicy));
        let empty = AnswerFacts {
            empty: true,
            schema_checked: true,
            schema_errors: vec![SchemaError { path: String::new(), message: "not JSON".into() }],
            ..Default::default()
        };
        assert_eq!(empty.failed(AnswerChecks::default()), Some(AnswerCheck::Empty));
        let cut = AnswerFacts { schema_errors: empty.schema_errors.clone(), ..finish("length") };
        assert_eq!(
            cut.failed(AnswerChecks::default()),
            Some(AnswerCheck::Cut),
            "a cut answer's JSON is broken because it was cut"
        );
    }

    #[test]
    fn only_the_workflows_own_misses_are_its_to_count() {
        assert!(AnswerCheck::Schema.is_the_workflows() && AnswerCheck::Cut.is_the_workflows());
        assert!(!AnswerCheck::Empty.is_the_workflows() && !AnswerCheck::ContentPolicy.is_the_workflows());
    }
}
