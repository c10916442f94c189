//! From what a failed (or answered) call left behind to the engine's [`Outcome`]: the status as
//! received, the error codes, messages and class names down the cause chain, as the node found
//! them. The node hands these facts over unread; which of them decides, and what n8n's message
//! texts mean, is decided here (the node used to filter codes by shape and map messages itself,
//! and lost `EAI_AGAIN` and every status n8n's messages name only by class).
use crate::facts::retry_after::HintHeaders;
use crate::verdict::outcome::Outcome;

/// A status as it came: JSON's number, or the texts of every status field down the cause chain
/// (n8n's `httpCode`, the SDK's `status`), joined by `ROW_SEPARATOR`: the first that reads as
/// a status decides.
#[derive(Debug, Clone, PartialEq)]
pub enum RawStatus {
    Number(f64),
    Text(String),
}

/// What the node saw of one call, unread.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Facts<'a> {
    /// The call ended with an answer (a resolved model call, an item on the main output), not
    /// with an error.
    pub answered: bool,
    /// The status as received: a number or n8n's `httpCode` text (`"503"`, `"5XX"`); none when
    /// nothing carried one.
    pub status: Option<RawStatus>,
    /// Error codes down the cause chain, outermost first, spelled as they came.
    pub codes: Vec<&'a str>,
    /// Error messages down the cause chain, outermost first.
    pub messages: Vec<&'a str>,
    /// Error class names down the cause chain (`NodeApiError`, `TimeoutError`, …).
    pub names: Vec<&'a str>,
    pub headers: HintHeaders,
    pub failed_check: Option<String>,
    /// What an answer was, for the answer checks (a resolved model call).
    pub answer: Option<crate::verdict::answer_check::AnswerFacts>,
}

/// FNV-1a (64 bits) of a message: n8n's messages below are compared by it, computed when the
/// engine is compiled, so their texts stay in this source and out of the WASM engine (1.3 KB).
/// Another message hashing the same as one of them: about 1 in 10^18.
const fn fnv(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let (mut hash, mut i) = (0xcbf2_9ce4_8422_2325_u64, 0);
    while i < bytes.len() {
        hash = (hash ^ bytes[i] as u64).wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    hash
}

/// n8n's NodeApiError messages by HTTP status (n8n-workflow's node-api.error, the same text in
/// 1.123 and 2.41): a node whose error item keeps only the message still tells what it met. The
/// two generic ones name only a class.
const STATUS_MESSAGES: &[(u64, StatusFact)] = &[
    (fnv("Bad request - please check your parameters"), StatusFact::Exact(400)),
    (fnv("Authorization failed - please check your credentials"), StatusFact::Exact(401)),
    (fnv("Payment required - perhaps check your payment details?"), StatusFact::Exact(402)),
    (fnv("Forbidden - perhaps check your credentials?"), StatusFact::Exact(403)),
    (fnv("The resource you are requesting could not be found"), StatusFact::Exact(404)),
    (fnv("Method not allowed - please check you are using the right HTTP method"), StatusFact::Exact(405)),
    (fnv("The service is receiving too many requests from you"), StatusFact::Exact(429)),
    (fnv("The service was not able to process your request"), StatusFact::Exact(500)),
    (fnv("Bad gateway - the service failed to handle your request"), StatusFact::Exact(502)),
    (
        fnv("Service unavailable - try again later or consider setting this node to retry automatically (in the node settings)"),
        StatusFact::Exact(503),
    ),
    (fnv("Gateway timed out - perhaps try again later?"), StatusFact::Exact(504)),
    (fnv("Your request is invalid or could not be processed by the service"), StatusFact::Class(4)),
    (fnv("The service failed to process your request"), StatusFact::Class(5)),
];

/// n8n's descriptive messages for network error codes (NodeError's COMMON_ERRORS).
const CODE_MESSAGES: &[(u64, &str)] = &[
    (fnv("The service refused the connection - perhaps it is offline"), "ECONNREFUSED"),
    (
        fnv("The connection to the server was closed unexpectedly, perhaps it is offline. You can retry the request immediately or wait and retry later."),
        "ECONNRESET",
    ),
    (
        fnv("The connection cannot be established, this usually occurs due to an incorrect host (domain) value"),
        "ENOTFOUND",
    ),
    (fnv("The connection timed out, consider setting the 'Retry on Fail' option in the node settings"), "ETIMEDOUT"),
    (fnv("The connection was aborted, perhaps the server is offline"), "ECONNABORTED"),
    (fnv("The host is unreachable, perhaps the server is offline"), "EHOSTUNREACH"),
    (fnv("The DNS server returned an error, perhaps the server is offline"), "EAI_AGAIN"),
];

/// A wrapper's code under which a message about a cut-off body means the peer reset the
/// connection (axios' ERR_BAD_RESPONSE "stream has been aborted", with no socket code under it).
const CUT_OFF_WRAPPERS: &[&str] = &["ERR_BAD_RESPONSE", "ERR_STREAM_PREMATURE_CLOSE"];

/// Node's fetch (undici) says this, and only this, when the request failed below HTTP.
const FETCH_FAILED_TEXT: &str = "fetch failed";
/// The code of such a failure whose cause (the socket's code) a client dropped.
pub const FETCH_FAILED: &str = "FETCH_FAILED";

/// The code for a failure nothing identifies: the provider failed, not worth repeating.
pub const UNKNOWN_CODE: &str = "EUNKNOWN";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StatusFact {
    Exact(u16),
    /// An unknown status of this class (4 or 5).
    Class(u8),
}

/// A status as received: a whole number from 100 to 599, or n8n's class text ("4XX", "5XX").
fn status_fact(raw: &RawStatus) -> Option<StatusFact> {
    match raw {
        RawStatus::Number(n) => {
            (n.fract() == 0.0 && (100.0..=599.0).contains(n)).then_some(StatusFact::Exact(*n as u16))
        }
        RawStatus::Text(t) => t.split(crate::rows::row_text::SEPARATOR).find_map(status_text),
    }
}

fn status_text(raw: &str) -> Option<StatusFact> {
    // By hand, not `str::parse`: this runs in the WASM engine, where every byte counts.
    match raw.trim().as_bytes() {
        [c @ b'1'..=b'5', d @ b'0'..=b'9', u @ b'0'..=b'9'] => {
            Some(StatusFact::Exact(u16::from(c - b'0') * 100 + u16::from(d - b'0') * 10 + u16::from(u - b'0')))
        }
        [c @ (b'4' | b'5'), x, y] if x.eq_ignore_ascii_case(&b'x') && y.eq_ignore_ascii_case(&b'x') => {
            Some(StatusFact::Class(c - b'0'))
        }
        _ => None,
    }
}

/// A Node socket or DNS code (`ECONNRESET`, `EAI_AGAIN`), as opposed to a library's wrapper
/// code (`ERR_BAD_RESPONSE`) or a vendor's error code (`rate_limit_exceeded`).
fn is_socket_code(code: &str) -> bool {
    code.len() > 1
        && code.starts_with('E')
        && !code.starts_with("ERR_")
        && code.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// A code that names the failure in the error class's own terms (upper case, a library's).
fn is_named_code(code: &str) -> bool {
    code.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
        && code.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Whether `haystack` holds `word` (lower case) in any case, not inside a longer word.
fn has_word(haystack: &str, word: &str) -> bool {
    let (h, w) = (haystack.as_bytes(), word.as_bytes());
    (0..(h.len() + 1).saturating_sub(w.len())).any(|i| {
        h[i..i + w.len()].eq_ignore_ascii_case(w)
            && (i == 0 || !h[i - 1].is_ascii_alphanumeric())
            && h.get(i + w.len()).is_none_or(|b| !b.is_ascii_alphanumeric())
    })
}

/// A message about a body cut off mid-way ("stream has been aborted", "Premature close"); not
/// n8n's ECONNABORTED text, which names its own code.
fn says_cut_off(message: &str) -> bool {
    has_word(message, "premature close") || has_word(message, "aborted") && !has_word(message, "connection was aborted")
}

/// The label an outcome carries into a streamed answer broken after its first chunk.
pub fn broken_code(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Status { status, .. } => status.to_string(),
        Outcome::Class { class } => format!("{class}XX"),
        Outcome::Error { code } | Outcome::Broken { code } => code.clone(),
    }
}

/// The outcome these facts make.
pub fn outcome_of(f: Facts) -> Outcome {
    let status = f.status.as_ref().and_then(status_fact).or_else(|| {
        (!f.answered)
            .then(|| {
                f.messages
                    .iter()
                    .map(|m| fnv(m))
                    .find_map(|h| STATUS_MESSAGES.iter().find(|(t, _)| *t == h).map(|(_, s)| *s))
            })
            .flatten()
    });
    match status {
        Some(StatusFact::Exact(status)) => {
            return Outcome::Status {
                status,
                headers: f.headers.clone(),
                failed_check: f.failed_check.clone(),
                answer: f.answer.clone(),
                body: None,
            }
        }
        Some(StatusFact::Class(class)) => return Outcome::Class { class },
        None => {}
    }
    if f.answered {
        // An answer that carried no status: a success, as an HTTP 200 would be.
        return Outcome::Status {
            status: 200,
            headers: f.headers.clone(),
            failed_check: f.failed_check.clone(),
            answer: f.answer.clone(),
            body: None,
        };
    }
    if f.names.contains(&"TimeoutError") {
        return Outcome::Error { code: crate::verdict::outcome::DEADLINE_CODE.into() };
    }
    if let Some(code) = f.codes.iter().find(|c| is_socket_code(c)) {
        return Outcome::Error { code: code.to_string() };
    }
    let wrapper = f.codes.iter().find(|c| is_named_code(c));
    if f.messages.iter().any(|m| says_cut_off(m)) && wrapper.is_none_or(|c| CUT_OFF_WRAPPERS.contains(c)) {
        return Outcome::Error { code: "ECONNRESET".into() };
    }
    if let Some(code) =
        f.messages.iter().map(|m| fnv(m)).find_map(|h| CODE_MESSAGES.iter().find(|(t, _)| *t == h).map(|(_, c)| *c))
    {
        return Outcome::Error { code: code.into() };
    }
    if f.messages.iter().any(|m| m.trim_end().ends_with(FETCH_FAILED_TEXT)) {
        // Node's fetch failed below HTTP (refused, reset, DNS) and a client kept only its words
        // (Google's Gemini SDK): a network failure, though which one is lost.
        return Outcome::Error { code: FETCH_FAILED.into() };
    }
    Outcome::Error { code: wrapper.copied().unwrap_or(UNKNOWN_CODE).to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed() -> Facts<'static> {
        Facts::default()
    }
    fn code(c: &str) -> Outcome {
        Outcome::Error { code: c.into() }
    }
    fn text(s: &str) -> RawStatus {
        RawStatus::Text(s.into())
    }
    fn status(s: u16) -> Outcome {
        Outcome::status(s, HintHeaders::default())
    }

    /// Found by the chat-model matrix: Google's Gemini SDK rethrows Node's "fetch failed" as
    /// its own error, message only, the socket's code (ECONNREFUSED) gone with its cause.
    #[test]
    fn a_fetch_failed_whose_cause_was_dropped_is_a_network_failure() {
        let gemini = "[GoogleGenerativeAI Error]: Error fetching from http://127.0.0.1:9/v1beta/models/m:generateContent: fetch failed";
        let f = Facts { messages: vec![gemini], ..failed() };
        assert_eq!(outcome_of(f), code(FETCH_FAILED));
        assert!(crate::verdict::outcome::TRANSIENT_ERRORS.contains(&FETCH_FAILED), "retried, and counted");
        // With the cause kept (OpenAI's client, undici's TypeError), the socket's code decides.
        let kept = Facts { messages: vec!["fetch failed"], codes: vec!["ECONNREFUSED"], ..failed() };
        assert_eq!(outcome_of(kept), code("ECONNREFUSED"));
        // Not a word inside another message.
        let other = Facts { messages: vec!["the prefetch failed to warm"], ..failed() };
        assert_eq!(outcome_of(other), code(UNKNOWN_CODE));
    }

    #[test]
    fn a_status_as_received_decides_first_whatever_its_shape() {
        for raw in ["529", " 503", "408"] {
            let f = Facts { status: Some(text(raw)), codes: vec!["ECONNRESET"], ..failed() };
            assert_eq!(outcome_of(f), status(raw.trim().parse().unwrap()), "{raw}");
        }
        let f = Facts { status: Some(RawStatus::Number(529.0)), ..failed() };
        assert_eq!(outcome_of(f), status(529));
        let f = Facts { status: Some(text("error\u{1e}429")), ..failed() };
        assert_eq!(outcome_of(f), status(429), "the first field that reads as a status");
        for raw in ["0", "600", "abc", "", "5000"] {
            let f = Facts { status: Some(text(raw)), ..failed() };
            assert_eq!(outcome_of(f), code(UNKNOWN_CODE), "{raw:?} is no status");
        }
        for n in [0.0, 99.0, 600.0, 503.5, -503.0] {
            let f = Facts { status: Some(RawStatus::Number(n)), ..failed() };
            assert_eq!(outcome_of(f), code(UNKNOWN_CODE), "{n} is no status");
        }
    }

    #[test]
    fn n8n_class_text_is_an_unknown_status_of_that_class() {
        assert_eq!(outcome_of(Facts { status: Some(text("5XX")), ..failed() }), Outcome::Class { class: 5 });
        let m =
            Facts { messages: vec!["Your request is invalid or could not be processed by the service"], ..failed() };
        assert_eq!(outcome_of(m), Outcome::Class { class: 4 });
        let m = Facts { messages: vec!["The service failed to process your request"], ..failed() };
        assert_eq!(outcome_of(m), Outcome::Class { class: 5 }, "not 500: a 529 says the same");
        let m = Facts { messages: vec!["Gateway timed out - perhaps try again later?"], ..failed() };
        assert_eq!(outcome_of(m), status(504));
    }

    #[test]
    fn a_socket_code_anywhere_in_the_chain_wins_whatever_its_spelling() {
        let f = Facts { codes: vec!["ERR_BAD_RESPONSE", "EAI_AGAIN"], ..failed() };
        assert_eq!(outcome_of(f), code("EAI_AGAIN"));
        let f = Facts { codes: vec!["rate_limit_exceeded", "ENOTFOUND"], ..failed() };
        assert_eq!(outcome_of(f), code("ENOTFOUND"));
    }

    #[test]
    fn a_body_cut_off_under_a_wrapper_is_a_reset_connection() {
        let f = Facts { codes: vec!["ERR_BAD_RESPONSE"], messages: vec!["stream has been aborted"], ..failed() };
        assert_eq!(outcome_of(f), code("ECONNRESET"));
        let f = Facts { messages: vec!["Premature close"], ..failed() };
        assert_eq!(outcome_of(f), code("ECONNRESET"));
        let f = Facts { codes: vec!["ERR_CANCELED"], messages: vec!["aborted"], ..failed() };
        assert_eq!(outcome_of(f), code("ERR_CANCELED"), "another wrapper keeps its own code");
        let f = Facts { messages: vec!["The connection was aborted, perhaps the server is offline"], ..failed() };
        assert_eq!(outcome_of(f), code("ECONNABORTED"), "n8n's message names its code");
    }

    #[test]
    fn n8n_messages_name_codes_and_a_timeout_class_is_our_deadline() {
        let f = Facts { messages: vec!["The DNS server returned an error, perhaps the server is offline"], ..failed() };
        assert_eq!(outcome_of(f), code("EAI_AGAIN"));
        let f = Facts { names: vec!["APIConnectionTimeoutError", "TimeoutError"], ..failed() };
        assert_eq!(outcome_of(f), code("TIMEOUT"));
    }

    #[test]
    fn a_stream_broken_by_what_these_facts_make_keeps_its_code() {
        assert_eq!(broken_code(&outcome_of(Facts { codes: vec!["EAI_AGAIN"], ..failed() })), "EAI_AGAIN");
        assert_eq!(broken_code(&outcome_of(Facts { status: Some(text("5xx")), ..failed() })), "5XX");
        assert_eq!(broken_code(&status(529)), "529");
    }

    #[test]
    fn an_answer_without_a_status_is_a_success_and_messages_do_not_make_it_fail() {
        let f = Facts { answered: true, messages: vec!["The service failed to process your request"], ..failed() };
        assert_eq!(outcome_of(f), status(200));
        let f = Facts { answered: true, status: Some(text("429")), ..failed() };
        assert_eq!(outcome_of(f), status(429), "a full response's own status");
        assert_eq!(outcome_of(failed()), code(UNKNOWN_CODE));
    }
}
