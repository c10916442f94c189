//! Vendors' finish words in one vocabulary, OpenAI's (`stop`, `length`, `tool_calls`,
//! `content_filter`): what Call Chain's LLM presets show as an answer's `finish_reason`. The
//! answer checks read the word as it came (`answer_check`); this is only how it is shown.

/// Anthropic's and Gemini's words by the shared one they mean. OpenAI's (and its dialect's) are
/// the shared vocabulary already.
const WORDS: &[(&str, &str)] = &[
    // Anthropic's stop_reason.
    ("end_turn", "stop"),
    ("stop_sequence", "stop"),
    ("max_tokens", "length"),
    ("tool_use", "tool_calls"),
    ("refusal", "content_filter"),
    // Gemini's finishReason.
    ("STOP", "stop"),
    ("MAX_TOKENS", "length"),
    ("SAFETY", "content_filter"),
    ("PROHIBITED_CONTENT", "content_filter"),
    ("BLOCKLIST", "content_filter"),
    ("SPII", "content_filter"),
];

/// `word` in the shared vocabulary; a word it does not know, lower-cased (ASCII).
pub fn shared(word: &str) -> String {
    match WORDS.iter().find(|(w, _)| *w == word) {
        Some((_, s)) => (*s).to_string(),
        // ASCII only: finish words are, and Unicode case tables would add 20 KB to the engine.
        None => word.to_ascii_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::shared;

    #[test]
    fn each_vendors_word_is_shown_in_the_shared_vocabulary() {
        for (word, said) in [
            ("end_turn", "stop"),
            ("max_tokens", "length"),
            ("tool_use", "tool_calls"),
            ("refusal", "content_filter"),
            ("STOP", "stop"),
            ("MAX_TOKENS", "length"),
            ("SAFETY", "content_filter"),
            ("length", "length"),
            ("RECITATION", "recitation"),
        ] {
            assert_eq!(shared(word), said, "{word}");
        }
    }
}
