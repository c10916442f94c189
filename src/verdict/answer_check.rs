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

impl AnswerFacts {
    /// The check this answer fails, the first in order of what it says about the answer: a
    /// refusal or filter (whatever text came with it), nothing at all, cut short, off-schema.
    pub fn failed(&self) -> Option<AnswerCheck> {
        let finish = self.finish.as_deref().unwrap_or("");
        if self.refusal || is_one_of(finish, POLICY_WORDS) {
            return Some(AnswerCheck::ContentPolicy);
        }
        if self.empty {
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

    /// The checks a served answer passed, by name (the schema only when there was one).
    pub fn passed(&self) -> Vec<&'static str> {
        let mut v = vec!["not_empty", "not_cut", "not_refused"];
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
    fn each_vendors_finish_word_is_read_as_its_check() {
        for w in ["length", "max_tokens", "MAX_TOKENS", "max_output_tokens"] {
            assert_eq!(finish(w).failed(), Some(AnswerCheck::Cut), "{w}");
        }
        for w in ["content_filter", "SAFETY", "RECITATION", "refusal", "PROHIBITED_CONTENT", "guardrail_intervened"] {
            assert_eq!(finish(w).failed(), Some(AnswerCheck::ContentPolicy), "{w}");
        }
        for w in ["stop", "end_turn", "STOP", "tool_calls", "tool_use", ""] {
            assert_eq!(finish(w).failed(), None, "{w}");
        }
    }

    #[test]
    fn a_refusal_outranks_an_empty_answer_and_an_empty_one_a_schema_miss() {
        let refused = AnswerFacts { refusal: true, empty: true, ..Default::default() };
        assert_eq!(refused.failed(), Some(AnswerCheck::ContentPolicy));
        let empty = AnswerFacts {
            empty: true,
            schema_checked: true,
            schema_errors: vec![SchemaError { path: String::new(), message: "not JSON".into() }],
            ..Default::default()
        };
        assert_eq!(empty.failed(), Some(AnswerCheck::Empty));
        let cut = AnswerFacts { schema_errors: empty.schema_errors.clone(), ..finish("length") };
        assert_eq!(cut.failed(), Some(AnswerCheck::Cut), "a cut answer's JSON is broken because it was cut");
    }

    #[test]
    fn only_the_workflows_own_misses_are_its_to_count() {
        assert!(AnswerCheck::Schema.is_the_workflows() && AnswerCheck::Cut.is_the_workflows());
        assert!(!AnswerCheck::Empty.is_the_workflows() && !AnswerCheck::ContentPolicy.is_the_workflows());
    }
}
