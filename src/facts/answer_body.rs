//! What of an answer's body the engine reads: its first [`BODY_LIMIT`] bytes, for the statuses a
//! rule reads it on (a 400's context-too-long wording, [`crate::facts::context_limit`]; a 429's or 503's
//! `retryDelay`, [`crate::facts::retry_after`]). The boundary copies nothing else: a success body never
//! enters the engine. The rules' modules read their statuses from here, so neither needs the other.

/// Bytes of a body the rules look at.
pub const BODY_LIMIT: usize = 4096;
/// The status whose body may say the input is too long.
pub const CONTEXT_LIMIT_STATUS: u16 = 400;
/// Statuses whose body may carry a hint (Gemini's `google.rpc.RetryInfo`).
pub const HINT_STATUSES: [u16; 2] = [429, 503];

/// Whether a 400's body says one of `phrases` (lower case), ignoring case, in its first
/// [`BODY_LIMIT`] bytes: how the vendors' wordings are read (too long, content policy).
pub fn bad_request_says(status: u16, body: Option<&str>, phrases: &[&str]) -> bool {
    let Some(body) = body.filter(|_| status == CONTEXT_LIMIT_STATUS) else { return false };
    let head = &body.as_bytes()[..body.len().min(BODY_LIMIT)];
    phrases.iter().any(|p| head.windows(p.len()).any(|w| w.eq_ignore_ascii_case(p.as_bytes())))
}

/// Whether the boundary hands this status's body over.
pub fn reads_body(status: u16) -> bool {
    status == CONTEXT_LIMIT_STATUS || HINT_STATUSES.contains(&status)
}
