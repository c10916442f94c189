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

/// The vendor's own numbers in its "too long" answer: the model's limit and what the request
/// took, in tokens, where its message says both (Ollama's says only by how much: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ContextNumbers {
    pub limit: u64,
    pub requested: u64,
}

/// Reads the limit and the request's size from a "too long" body: of the numbers in it (100 and
/// up), the limit is the one nearest a word for the maximum ("maximum", "max", "allowed"), the
/// request the largest, above it (each vendor says the two in its own order: "210000 tokens >
/// 200000 maximum", "maximum context length is 8192 tokens. However, you requested 9000").
pub fn numbers(body: &str) -> Option<ContextNumbers> {
    let b = &body.as_bytes()[..body.len().min(crate::facts::answer_body::BODY_LIMIT)];
    let word = |at: &[u8], w: &[u8]| at.len() >= w.len() && at[..w.len()].eq_ignore_ascii_case(w);
    // One pass, no list kept (each iterator adapter costs the WASM engine its own code): the
    // number nearest a mark so far, the largest, the last mark, the last number before the next.
    let (mut limit, mut nearest, mut largest) = (0u64, usize::MAX, 0u64);
    let (mut last_mark, mut before_mark): (Option<usize>, Option<(u64, usize)>) = (None, None);
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let start = i;
            let mut v: u64 = 0;
            while i < b.len() && b[i].is_ascii_digit() {
                v = v.wrapping_mul(10).wrapping_add(u64::from(b[i] - b'0'));
                i += 1;
            }
            // Below 100 it is no token count (a status, a version).
            if v >= 100 {
                largest = largest.max(v);
                if let Some(m) = last_mark.filter(|&m| start - m < nearest) {
                    (limit, nearest) = (v, start - m);
                }
                before_mark = Some((v, i));
            }
            continue;
        }
        if word(&b[i..], b"max") || word(&b[i..], b"allowed") {
            last_mark = Some(i);
            if let Some((v, end)) = before_mark.take().filter(|&(_, end)| i - end < nearest) {
                (limit, nearest) = (v, i - end);
            }
        }
        i += 1;
    }
    (limit > 0 && largest > limit).then_some(ContextNumbers { limit, requested: largest })
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
    fn the_vendors_own_limit_and_request_are_read_from_its_words() {
        let read = |b: &str| numbers(b).map(|n| (n.limit, n.requested));
        let cases = [
            (
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
                Some((200_000, 210_000)),
            ),
            (
                r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#,
                Some((1_048_576, 1_200_000)),
            ),
            (
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8500 in the messages, 500 in the completion).","code":"context_length_exceeded"}}"#,
                Some((8_192, 9_000)),
            ),
            (
                r#"{"object":"error","message":"Prompt contains 300000 tokens, too large for model with 131072 maximum context length"}"#,
                Some((131_072, 300_000)),
            ),
            (r#"{"error":"prompt too long; exceeded max context length by 100 tokens"}"#, None),
            (
                r#"{"error":{"message":"Please reduce the length of the messages.","code":"context_length_exceeded"}}"#,
                None,
            ),
        ];
        for (body, want) in cases {
            assert_eq!(read(body), want, "{body}");
        }
    }

    #[test]
    fn only_the_first_4_kb_are_read() {
        let late = format!("{}prompt is too long", " ".repeat(crate::facts::answer_body::BODY_LIMIT));
        assert!(!input_too_long(400, Some(&late)));
        let multibyte = format!("{}prompt is too long", "é".repeat(100));
        assert!(input_too_long(400, Some(&multibyte)), "bytes, not char boundaries");
    }
}
