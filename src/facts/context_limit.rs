//! "The input is longer than the model's context": a 400 whose body says so. Not the provider's
//! fault and not worth repeating on it; another provider (a larger context) may take it.
//! Matched case-insensitively as a substring of the body's first
//! [`crate::facts::answer_body::BODY_LIMIT`] bytes.
use crate::facts::answer_body::bad_request_says;

/// Each vendor's wording, lower case. Kept small: each line names who says it.
pub const PHRASES: &[&str] = &[
    // OpenAI, Groq, vLLM, OpenRouter (OpenAI-style error code)
    "context_length_exceeded",
    // OpenAI, DeepSeek, OpenRouter, vLLM ("This model's maximum context length is 8192 tokens"),
    // Mistral ("Prompt contains 300000 tokens, too large for model with 131072 maximum context length")
    "maximum context length",
    // OpenAI ("Your input exceeds the context window of this model")
    "exceeds the context window",
    // Anthropic ("prompt is too long: 210000 tokens > 200000 maximum")
    "prompt is too long",
    // Google Gemini ("The input token count (1200000) exceeds the maximum number of tokens allowed")
    "exceeds the maximum number of tokens",
    // Ollama ("prompt too long; exceeded max context length by 100 tokens")
    "prompt too long; exceeded",
    // Ollama ("the input length exceeds the context length")
    "exceeds the context length",
];

/// Whether an answer with this status and body says the input was too long for the model.
pub fn input_too_long(status: u16, body: Option<&str>) -> bool {
    bad_request_says(status, body, PHRASES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_vendor_wording_is_recognised_in_a_400_only() {
        let bodies = [
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","code":"context_length_exceeded"}}"#,
            r#"{"error":{"message":"Please reduce the length of the messages or completion.","code":"context_length_exceeded"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"Prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#,
            r#"{"object":"error","message":"Prompt contains 300000 tokens, too large for model with 131072 maximum context length"}"#,
            r#"{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 200000 tokens"}}"#,
            r#"{"error":"prompt too long; exceeded max context length by 100 tokens"}"#,
            r#"{"error":"the input length exceeds the context length"}"#,
        ];
        for b in bodies {
            assert!(input_too_long(400, Some(b)), "{b}");
            assert!(!input_too_long(500, Some(b)), "only a 400: {b}");
            assert!(!input_too_long(429, Some(b)), "a 429's body is read for its hint only: {b}");
        }
        for other in [r#"{"error":{"message":"Invalid 'model'"}}"#, "", "maximum context"] {
            assert!(!input_too_long(400, Some(other)), "{other}");
        }
        assert!(!input_too_long(400, None));
    }

    #[test]
    fn only_the_first_4_kb_are_read() {
        let late = format!("{}prompt is too long", " ".repeat(crate::facts::answer_body::BODY_LIMIT));
        assert!(!input_too_long(400, Some(&late)));
        let multibyte = format!("{}prompt is too long", "é".repeat(100));
        assert!(input_too_long(400, Some(&multibyte)), "bytes, not char boundaries");
    }
}
