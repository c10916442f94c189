//! Server hints on when to come back: `Retry-After` (delta-seconds or HTTP-date) and OpenAI's
//! `retry-after-ms`; the `RateLimit-Reset` / `X-RateLimit-Reset` family and the LLM vendors' own
//! resets (OpenAI's and Groq's Go durations, Anthropic's RFC 3339 times); Gemini's `RetryInfo` in
//! a 429's body. A hint wins over the backoff schedule. This module holds the headers a hint is
//! read from and chooses the winning hint; `hint_parse` reads each value.
use crate::facts::answer_body::HINT_STATUSES;
pub use crate::facts::hint_parse::{
    body_retry_delay, parse_duration, parse_reset, parse_retry_after, parse_retry_after_ms, parse_rfc3339,
    EPOCH_MILLIS_FLOOR, EPOCH_SECONDS_FLOOR, MAX_HINT_MS,
};
use serde::{Deserialize, Serialize};

/// Where a hint came from. Shown (the attempt log's `retry_after` says whether it was the
/// Retry-After family), never interpreted by the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HintSource {
    /// `Retry-After`.
    RetryAfter,
    /// `RateLimit-Reset` / `X-RateLimit-Reset`.
    RateLimitReset,
    /// OpenAI's `retry-after-ms`.
    RetryAfterMs,
    /// A vendor's own reset: OpenAI's and Groq's `x-ratelimit-reset-{requests,tokens}`,
    /// Anthropic's `anthropic-ratelimit-*-reset`.
    VendorReset,
    /// Gemini's `google.rpc.RetryInfo` `retryDelay` in the error body.
    BodyRetryDelay,
}

impl HintSource {
    /// The server said when to retry (the Retry-After family), rather than when a quota resets.
    pub fn is_retry_after(self) -> bool {
        !matches!(self, HintSource::RateLimitReset | HintSource::VendorReset)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hint {
    /// How long from `now_ms` the server asks us to wait (0 for a date in the past).
    pub delay_ms: u64,
    pub source: HintSource,
}

/// The response headers the engine reads a hint from, lower-case: the node copies exactly these
/// from an answer (generated into the node's constants). [`HintHeaders`] holds them in this order.
pub const HINT_HEADER_NAMES: [&str; 18] = [
    "retry-after",
    "ratelimit-reset",
    "x-ratelimit-reset",
    "ratelimit-remaining",
    "x-ratelimit-remaining",
    // OpenAI: milliseconds, the most precise.
    "retry-after-ms",
    // From here on, each vendor reset is followed by its own remaining count (VENDOR_PAIRS).
    // OpenAI, Groq: Go durations ("6m0s", "1.5s", "20ms").
    "x-ratelimit-reset-requests",
    "x-ratelimit-remaining-requests",
    "x-ratelimit-reset-tokens",
    "x-ratelimit-remaining-tokens",
    // Anthropic: RFC 3339 times ("2026-12-03T08:15:30Z").
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-requests-remaining",
    "anthropic-ratelimit-tokens-reset",
    "anthropic-ratelimit-tokens-remaining",
    "anthropic-ratelimit-input-tokens-reset",
    "anthropic-ratelimit-input-tokens-remaining",
    "anthropic-ratelimit-output-tokens-reset",
    "anthropic-ratelimit-output-tokens-remaining",
];
const RETRY_AFTER: usize = 0;
const RETRY_AFTER_MS: usize = 5;
/// The vendors' (reset, remaining) pairs: from here to the end of [`HINT_HEADER_NAMES`].
const VENDOR_PAIRS: usize = 6;
/// The first pair read as RFC 3339 times (Anthropic's); those before are Go durations.
const RFC3339_PAIRS: usize = 10;

/// Headers of interest, names lower-cased as n8n's request helper returns them: the values
/// present, by position in [`HINT_HEADER_NAMES`], in its order (most answers carry a few, so an
/// outcome stays small). As JSON, an object of those names (others are ignored; absent or `null`,
/// no value).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "HeaderMap")]
pub struct HintHeaders(Vec<(u8, String)>);

type HeaderMap = std::collections::BTreeMap<String, Option<String>>;

impl From<HeaderMap> for HintHeaders {
    fn from(mut map: HeaderMap) -> Self {
        HintHeaders::read(|name| Ok::<_, ()>(map.remove(name).flatten())).unwrap_or_default()
    }
}

/// Written as the object of its names and values, straight from its list (no map built: a
/// `BTreeMap` of its own type costs the engine's WASM its own copy of the tree's code).
impl Serialize for HintHeaders {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (i, v) in &self.0 {
            map.serialize_entry(HINT_HEADER_NAMES[usize::from(*i)], v)?;
        }
        map.end()
    }
}

impl HintHeaders {
    /// The value of header `name` (lower-case, one of [`HINT_HEADER_NAMES`]).
    pub fn get(&self, name: &str) -> Option<&str> {
        HINT_HEADER_NAMES.iter().position(|n| *n == name).and_then(|i| self.at(i))
    }

    /// Sets header `name`; a name not in [`HINT_HEADER_NAMES`] is not kept (the engine reads
    /// no other).
    pub fn set(&mut self, name: &str, value: Option<String>) {
        let Some(i) = HINT_HEADER_NAMES.iter().position(|n| *n == name) else { return };
        let i = i as u8;
        self.0.retain(|(k, _)| *k != i);
        if let Some(v) = value {
            self.0.insert(self.0.partition_point(|(k, _)| *k < i), (i, v));
        }
    }

    /// These headers and `name: value`.
    pub fn with(mut self, name: &str, value: impl Into<String>) -> Self {
        self.set(name, Some(value.into()));
        self
    }

    /// Each header's value as `value(name)` gives it, name by name of [`HINT_HEADER_NAMES`];
    /// the first error ends the reading.
    pub fn read<E>(mut value: impl FnMut(&str) -> Result<Option<String>, E>) -> Result<Self, E> {
        let mut h = HintHeaders::default();
        for (i, name) in HINT_HEADER_NAMES.into_iter().enumerate() {
            if let Some(v) = value(name)? {
                h.0.push((i as u8, v));
            }
        }
        Ok(h)
    }

    fn at(&self, i: usize) -> Option<&str> {
        self.0.iter().find(|(k, _)| usize::from(*k) == i).map(|(_, v)| v.as_str())
    }

    /// The remaining count at `i` says the quota is spent.
    fn spent(&self, i: usize) -> bool {
        self.at(i).map(str::trim) == Some("0")
    }
}

/// Statuses whose body may carry a hint (Gemini's `RetryInfo`).
fn reads_body(status: u16) -> bool {
    HINT_STATUSES.contains(&status)
}

/// The hint for a response, if any: [`hint_with_body`] without a body.
pub fn hint(status: Option<u16>, headers: &HintHeaders, now_ms: u64) -> Option<Hint> {
    hint_with_body(status, headers, None, now_ms)
}

/// The hint for a response, if any. The Retry-After family first: `retry-after-ms` (the most
/// precise), `Retry-After`, then (a 429 or 503 only) the body's `retryDelay`. Then the reset
/// family: a reset counts only on a 429 or when its own remaining count is 0 (otherwise it
/// describes a window we may still use); on a 429 where some remaining count is 0, only those
/// resets count (a reset of a quota not spent says when it is full again, not when a call may
/// go). Of the resets that count, the longest.
pub fn hint_with_body(status: Option<u16>, headers: &HintHeaders, body: Option<&str>, now_ms: u64) -> Option<Hint> {
    raw_hint(status, headers, body, now_ms).map(|h| Hint { delay_ms: h.delay_ms.min(MAX_HINT_MS), ..h })
}

fn raw_hint(status: Option<u16>, headers: &HintHeaders, body: Option<&str>, now_ms: u64) -> Option<Hint> {
    let found = |delay_ms, source| Some(Hint { delay_ms, source });
    if let Some(d) = headers.at(RETRY_AFTER_MS).and_then(parse_retry_after_ms) {
        return found(d, HintSource::RetryAfterMs);
    }
    if let Some(d) = headers.at(RETRY_AFTER).and_then(|v| parse_retry_after(v, now_ms)) {
        return found(d, HintSource::RetryAfter);
    }
    if let Some(d) = body.filter(|_| status.is_some_and(reads_body)).and_then(body_retry_delay) {
        return found(d, HintSource::BodyRetryDelay);
    }
    reset_hint(status, headers, now_ms)
}

/// The reset family alone, for an answer that served: the longest reset whose quota the answer
/// says is spent (a remaining count of 0), capped like every hint. A Retry-After on a success
/// does not hide it.
pub fn spent_reset(headers: &HintHeaders, now_ms: u64) -> Option<Hint> {
    reset_hint(None, headers, now_ms).map(|h| Hint { delay_ms: h.delay_ms.min(MAX_HINT_MS), ..h })
}

fn reset_hint(status: Option<u16>, headers: &HintHeaders, now_ms: u64) -> Option<Hint> {
    // The longest reset whose quota is spent, and the longest of all (a 429's when none is spent).
    let (mut spent_max, mut any_max) = (None, None);
    let mut note = |delay_ms: Option<u64>, spent: bool, source| {
        let Some(delay_ms) = delay_ms else { return };
        for (max, counts) in [(&mut spent_max, spent), (&mut any_max, true)] {
            if counts && max.is_none_or(|m: Hint| delay_ms > m.delay_ms) {
                *max = Some(Hint { delay_ms, source });
            }
        }
    };
    // The generic pair as before: either remaining count spends either reset.
    let generic = headers.at(1).or(headers.at(2)).and_then(|v| parse_reset(v, now_ms));
    note(generic, headers.spent(3) || headers.spent(4), HintSource::RateLimitReset);
    for i in (VENDOR_PAIRS..HINT_HEADER_NAMES.len()).step_by(2) {
        let reset =
            headers.at(i).and_then(|v| if i < RFC3339_PAIRS { parse_duration(v) } else { parse_rfc3339(v, now_ms) });
        note(reset, headers.spent(i + 1), HintSource::VendorReset);
    }
    spent_max.or(any_max.filter(|_| status == Some(429)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::answer_body::BODY_LIMIT;

    // 2015-10-21T07:28:00Z
    const AT: u64 = 1_445_412_480_000;

    fn headers(pairs: &[(&str, &str)]) -> HintHeaders {
        pairs.iter().fold(HintHeaders::default(), |h, (n, v)| h.with(n, *v))
    }

    #[test]
    fn delta_seconds() {
        assert_eq!(parse_retry_after("120", AT), Some(120_000));
        assert_eq!(parse_retry_after(" 0 ", AT), Some(0));
    }

    #[test]
    fn all_three_http_date_forms() {
        for v in ["Wed, 21 Oct 2015 07:28:30 GMT", "Wednesday, 21-Oct-15 07:28:30 GMT", "Wed Oct 21 07:28:30 2015"] {
            assert_eq!(parse_retry_after(v, AT), Some(30_000), "{v}");
        }
    }

    #[test]
    fn garbage_negative_and_missing_give_no_hint_past_date_gives_zero() {
        for v in ["", "-5", "abc", "1.5", "12abc", &"9".repeat(100_000)] {
            assert_eq!(parse_retry_after(v, AT), None, "{v:.20}");
        }
        assert_eq!(parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT", AT), Some(0));
        assert!(parse_retry_after("Tue, 01 Jan 2999 00:00:00 GMT", AT).unwrap() > 900 * 365 * 86_400_000);
        assert_eq!(hint(Some(503), &HintHeaders::default(), AT), None);
    }

    #[test]
    fn absurd_hints_are_capped_at_a_century() {
        for v in ["1000000000000000000000000000000", "18446744073709551615", "Tue, 01 Jan 2999 00:00:00 GMT"] {
            let h = headers(&[("retry-after", v)]);
            assert_eq!(
                hint(Some(503), &h, AT),
                Some(Hint { delay_ms: MAX_HINT_MS, source: HintSource::RetryAfter }),
                "{v}"
            );
        }
        let h = headers(&[("x-ratelimit-reset", "99999999999999999999")]);
        assert_eq!(hint(Some(429), &h, AT).map(|h| h.delay_ms), Some(MAX_HINT_MS));
        let h = headers(&[("retry-after", "3600")]);
        assert_eq!(hint(Some(503), &h, AT).map(|h| h.delay_ms), Some(3_600_000), "ordinary hints unchanged");
    }

    #[test]
    fn reset_seconds_versus_epoch() {
        assert_eq!(parse_reset("30", AT), Some(30_000));
        assert_eq!(parse_reset("1.5", AT), Some(1_500));
        assert_eq!(parse_reset("1000000000", AT), Some(1_000_000_000_000), "10^9 itself is delta-seconds");
        assert_eq!(parse_reset(&(AT / 1000 + 45).to_string(), AT), Some(45_000), "epoch seconds");
        assert_eq!(parse_reset(&(AT + 2_500).to_string(), AT), Some(2_500), "epoch milliseconds");
        assert_eq!(parse_reset(&(AT / 1000 - 10).to_string(), AT), Some(0), "epoch in the past");
        assert_eq!(parse_reset("-3", AT), None);
    }

    #[test]
    fn reset_read_only_on_429_or_exhausted_quota() {
        let h = headers(&[("x-ratelimit-reset", "7")]);
        assert_eq!(hint(Some(503), &h, AT), None);
        assert_eq!(hint(Some(429), &h, AT), Some(Hint { delay_ms: 7_000, source: HintSource::RateLimitReset }));
        let h0 = h.clone().with("ratelimit-remaining", "0");
        assert_eq!(hint(Some(503), &h0, AT).map(|h| h.delay_ms), Some(7_000));
    }

    #[test]
    fn retry_after_wins_over_reset() {
        let h = headers(&[("retry-after", "2"), ("ratelimit-reset", "9")]);
        assert_eq!(hint(Some(429), &h, AT), Some(Hint { delay_ms: 2_000, source: HintSource::RetryAfter }));
    }

    fn at(h: &HintHeaders, status: u16) -> Option<(u64, HintSource)> {
        hint(Some(status), h, AT).map(|h| (h.delay_ms, h.source))
    }

    #[test]
    fn openai_retry_after_ms_is_the_most_precise_and_wins() {
        assert_eq!(parse_retry_after_ms("1500"), Some(1_500));
        assert_eq!(parse_retry_after_ms(" 20.5 "), Some(21), "read up to a whole millisecond");
        assert_eq!(parse_retry_after_ms("0"), Some(0));
        for v in ["", "-5", "1.5s", "abc", "1.2.3"] {
            assert_eq!(parse_retry_after_ms(v), None, "{v}");
        }
        let h = headers(&[("retry-after-ms", "1500"), ("retry-after", "2"), ("x-ratelimit-reset-requests", "9s")]);
        assert_eq!(at(&h, 429), Some((1_500, HintSource::RetryAfterMs)));
        let garbage = h.clone().with("retry-after-ms", "soon");
        assert_eq!(at(&garbage, 429), Some((2_000, HintSource::RetryAfter)), "Retry-After when the ms one is garbage");
    }

    #[test]
    fn go_durations_as_openai_and_groq_send_them() {
        for (v, ms) in [
            ("6m0s", 360_000),
            ("1.5s", 1_500),
            ("20ms", 20),
            ("1h2m3.5s", 3_723_500),
            ("0s", 0),
            ("0", 0),
            ("2m59.56s", 179_560),
            ("7.66s", 7_660),
            ("31.250s", 31_250),
            ("1500us", 2),
            ("1µs", 1),
            ("999ns", 1),
            (" 30s ", 30_000),
        ] {
            assert_eq!(parse_duration(v), Some(ms), "{v}");
        }
        for v in ["", "s", "5", "-1s", "1d", "1.5", "1 s", "1s2", "1..5s", "abc"] {
            assert_eq!(parse_duration(v), None, "{v}");
        }
    }

    #[test]
    fn rfc3339_times_as_anthropic_sends_them() {
        // AT is 2015-10-21T07:28:00Z.
        for (v, ms) in [
            ("2015-10-21T07:28:30Z", 30_000),
            ("2015-10-21T07:28:30.250Z", 30_250),
            ("2015-10-21T07:28:30.0001Z", 30_001),
            ("2015-10-21T07:28:30.123456789Z", 30_124),
            ("2015-10-21T07:28:30+00:00", 30_000),
            ("2015-10-21T09:28:30+02:00", 30_000),
            ("2015-10-21T02:28:30-05:00", 30_000),
            ("2015-10-22t07:28:00z", 86_400_000),
            ("2015-10-21 07:29:00Z", 60_000),
            ("2016-03-01T00:00:00Z", 11_377_920_000),
            ("2015-10-21T07:27:00Z", 0),
            ("1970-01-01T00:00:00Z", 0),
        ] {
            assert_eq!(parse_rfc3339(v, AT), Some(ms), "{v}");
        }
        assert_eq!(parse_rfc3339("2026-12-03T08:15:30Z", 0), Some(1_796_285_730_000));
        assert_eq!(parse_rfc3339("2000-02-29T00:00:00Z", 0), Some(951_782_400_000), "a leap day");
        for v in [
            "",
            "2015-10-21",
            "2015-10-21T07:28:30",
            "2015-10-21T07:28:30.Z",
            "2015-13-21T07:28:30Z",
            "2015-10-21T24:00:00Z",
            "2015-10-21T07:28:30+0000",
            "2015-10-21T07:28:30Zjunk",
            "Wed, 21 Oct 2015 07:28:30 GMT",
            "20151021T072830Z",
        ] {
            assert_eq!(parse_rfc3339(v, AT), None, "{v}");
        }
    }

    #[test]
    fn a_vendor_reset_counts_on_a_429_or_when_its_own_quota_is_spent() {
        let openai = headers(&[
            ("x-ratelimit-reset-requests", "1s"),
            ("x-ratelimit-remaining-requests", "59"),
            ("x-ratelimit-reset-tokens", "6m0s"),
            ("x-ratelimit-remaining-tokens", "149984"),
        ]);
        assert_eq!(at(&openai, 200), None, "a window still open");
        assert_eq!(at(&openai, 503), None);
        assert_eq!(at(&openai, 429), Some((360_000, HintSource::VendorReset)), "a 429: the longest");
        let requests_spent = openai.clone().with("x-ratelimit-remaining-requests", "0");
        assert_eq!(at(&requests_spent, 200), Some((1_000, HintSource::VendorReset)), "spent, even on a success");
        assert_eq!(at(&requests_spent, 429), Some((1_000, HintSource::VendorReset)), "the spent quota's reset only");
        let both = requests_spent.clone().with("x-ratelimit-remaining-tokens", "0");
        assert_eq!(at(&both, 200), Some((360_000, HintSource::VendorReset)), "both spent: the longest");

        let anthropic = headers(&[
            ("anthropic-ratelimit-requests-reset", "2015-10-21T07:28:01Z"),
            ("anthropic-ratelimit-requests-remaining", "49"),
            ("anthropic-ratelimit-tokens-reset", "2015-10-21T07:28:20.5Z"),
            ("anthropic-ratelimit-tokens-remaining", "0"),
            ("anthropic-ratelimit-input-tokens-reset", "2015-10-21T07:28:20+00:00"),
            ("anthropic-ratelimit-input-tokens-remaining", "0"),
            ("anthropic-ratelimit-output-tokens-reset", "2015-10-21T07:28:40Z"),
            ("anthropic-ratelimit-output-tokens-remaining", "8000"),
        ]);
        assert_eq!(at(&anthropic, 200), Some((20_500, HintSource::VendorReset)));
        let with_retry_after = anthropic.clone().with("retry-after", "3");
        assert_eq!(at(&with_retry_after, 429), Some((3_000, HintSource::RetryAfter)), "Retry-After first");

        let groq = headers(&[("retry-after", "2"), ("x-ratelimit-reset-tokens", "7.66s")]);
        assert_eq!(at(&groq, 429), Some((2_000, HintSource::RetryAfter)));
        let groq = headers(&[("x-ratelimit-reset-tokens", "7.66s"), ("x-ratelimit-remaining-tokens", "0")]);
        assert_eq!(at(&groq, 200), Some((7_660, HintSource::VendorReset)));
    }

    #[test]
    fn resets_of_both_families_take_the_longest() {
        let h = headers(&[("x-ratelimit-reset", "5"), ("x-ratelimit-reset-tokens", "9s")]);
        assert_eq!(at(&h, 429), Some((9_000, HintSource::VendorReset)));
        let h = headers(&[("x-ratelimit-reset", "12"), ("x-ratelimit-reset-tokens", "9s")]);
        assert_eq!(at(&h, 429), Some((12_000, HintSource::RateLimitReset)));
        let spent = h.clone().with("x-ratelimit-remaining-tokens", "0");
        assert_eq!(at(&spent, 429), Some((9_000, HintSource::VendorReset)), "only the spent one");
        let garbage = headers(&[("x-ratelimit-reset-tokens", "later"), ("x-ratelimit-remaining-tokens", "0")]);
        assert_eq!(at(&garbage, 429), None);
        let far = headers(&[("anthropic-ratelimit-tokens-reset", "2999-01-01T00:00:00Z")]);
        assert_eq!(at(&far, 429), Some((MAX_HINT_MS, HintSource::VendorReset)), "capped");
    }

    const GEMINI_429: &str = r#"{
  "error": {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan and billing details.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
      {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [
          {
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
            "quotaDimensions": { "location": "global", "model": "gemini-2.0-flash" },
            "quotaValue": "15"
          }
        ]
      },
      {
        "@type": "type.googleapis.com/google.rpc.Help",
        "links": [{ "description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits" }]
      },
      {
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": "31s"
      }
    ]
  }
}"#;

    #[test]
    fn gemini_retry_info_in_the_body_of_a_429_or_503() {
        let none = HintHeaders::default();
        let body = |status, b| hint_with_body(Some(status), &none, Some(b), AT).map(|h| (h.delay_ms, h.source));
        assert_eq!(body(429, GEMINI_429), Some((31_000, HintSource::BodyRetryDelay)));
        assert_eq!(body(503, GEMINI_429), Some((31_000, HintSource::BodyRetryDelay)));
        assert_eq!(body(500, GEMINI_429), None, "only where the body is read");
        for (b, ms) in [
            (r#"{"retryDelay":"0.5s"}"#, Some(500)),
            (r#"{"retryDelay" : "31.250s"}"#, Some(31_250)),
            (r#"[{"error":{"details":[{"retryDelay":"2s"}]}}]"#, Some(2_000)),
            (r#"Error: [429 Too Many Requests] {\"retryDelay\": \"7s\"}"#, Some(7_000)),
            (r#"{"retryDelay":"soon"}"#, None),
            (r#"{"retryDelay":31}"#, None),
            (r#"{"retryDelay""#, None),
            ("", None),
        ] {
            assert_eq!(body_retry_delay(b), ms, "{b}");
        }
        let late = format!("{}\"retryDelay\":\"3s\"", " ".repeat(BODY_LIMIT));
        assert_eq!(body_retry_delay(&late), None, "only the first 4 KB are read");
        let h = headers(&[("retry-after", "4")]);
        assert_eq!(hint_with_body(Some(429), &h, Some(GEMINI_429), AT).map(|h| h.source), Some(HintSource::RetryAfter));
        let reset = headers(&[("x-ratelimit-reset", "60")]);
        assert_eq!(
            hint_with_body(Some(429), &reset, Some(GEMINI_429), AT).map(|h| (h.delay_ms, h.source)),
            Some((31_000, HintSource::BodyRetryDelay)),
            "the Retry-After family before the resets"
        );
    }

    #[test]
    fn headers_are_a_map_of_their_lower_case_names() {
        let h: HintHeaders = serde_json::from_value(serde_json::json!({
            "retry-after-ms": "1500", "anthropic-ratelimit-tokens-reset": "2015-10-21T07:28:30Z",
            "retry-after": null, "x-other": "ignored"
        }))
        .unwrap();
        assert_eq!(h.get("retry-after-ms"), Some("1500"));
        assert_eq!(h.get("retry-after"), None);
        assert_eq!(h.get("x-other"), None);
        assert_eq!(
            serde_json::to_value(&h).unwrap(),
            serde_json::json!({ "retry-after-ms": "1500", "anthropic-ratelimit-tokens-reset": "2015-10-21T07:28:30Z" })
        );
        assert_eq!(HintHeaders::default().with("x-other", "1"), HintHeaders::default());
        let mut all = HintHeaders::default();
        for n in HINT_HEADER_NAMES {
            assert!(n.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "{n}");
            all.set(n, Some(n.into()));
            assert_eq!(all.get(n), Some(n));
        }
    }
}
