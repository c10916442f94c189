//! "The vendor's content policy refused this": a 400 whose body says so. Another provider may
//! take the same input, and it says nothing of this one's health (LiteLLM's
//! `content_policy_fallbacks`). Matched broadly (BerriAI/litellm#10793: a classifier that misses a
//! vendor's wording misses the fallback), case-insensitively in the body's first
//! [`crate::facts::answer_body::BODY_LIMIT`] bytes, as [`crate::facts::context_limit`] reads length.
use crate::facts::answer_body::bad_request_says;

/// Each vendor's wording, lower case. Each line names who says it.
pub const PHRASES: &[&str] = &[
    // OpenAI (error code), Azure OpenAI ("code": "content_filter"), LiteLLM's own mapping
    "content_policy_violation",
    "\"content_filter\"",
    // Azure OpenAI ("The response was filtered due to the prompt triggering Azure OpenAI's
    // content management policy")
    "content management policy",
    // OpenAI ("Your request was rejected as a result of our safety system")
    "our safety system",
    // Gemini (a blocked prompt: "blockReason": "SAFETY" / "PROHIBITED_CONTENT")
    "blockreason",
    // Bedrock ("guardrail_intervened"), Mistral and others ("violates our content policy")
    "guardrail",
    "content policy",
];

/// Whether an answer with this status and body says the vendor's content policy refused it.
pub fn refused_by_policy(status: u16, body: Option<&str>) -> bool {
    bad_request_says(status, body, PHRASES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_vendor_wording_is_recognised_in_a_400_only() {
        let bodies = [
            r#"{"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","code":"content_policy_violation"}}"#,
            r#"{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","code":"content_filter","status":400}}"#,
            r#"{"promptFeedback":{"blockReason":"SAFETY"}}"#,
            r#"{"message":"guardrail_intervened"}"#,
            r#"{"object":"error","message":"The input violates our content policy"}"#,
        ];
        for b in bodies {
            assert!(refused_by_policy(400, Some(b)), "{b}");
            assert!(!refused_by_policy(500, Some(b)), "only a 400: {b}");
        }
        for other in [r#"{"error":{"message":"Invalid 'model'"}}"#, "", r#"{"finish_reason":"content_filtered"}"#] {
            assert!(!refused_by_policy(400, Some(other)), "{other}");
        }
        assert!(!refused_by_policy(400, None));
    }
}
