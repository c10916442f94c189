//! Server hints on when to come back: `Retry-After` (delta-seconds or HTTP-date) and the
//! `RateLimit-Reset` / `X-RateLimit-Reset` family. A hint wins over the backoff schedule.
use serde::{Deserialize, Serialize};
use std::time::{Duration, UNIX_EPOCH};

/// Header values this long are garbage, not hints (and parsing them is a waste).
const MAX_HEADER_LEN: usize = 128;
/// Longer hints are read as this long: 100 years, far past every cap, so a server asking for
/// "forever" (`Retry-After: 10^30`, a date in 2999) still closes the provider and defers the item;
/// but `now + hint` stays a number and a date JavaScript can hold (u64::MAX ms failed at the WASM
/// boundary and took the whole execution down).
pub const MAX_HINT_MS: u64 = 100 * 365 * 86_400_000;
/// Reset values above this are Unix epochs in seconds; at or below, delta-seconds.
pub const EPOCH_SECONDS_FLOOR: u64 = 1_000_000_000;
/// Reset values above this are Unix epochs in milliseconds.
pub const EPOCH_MILLIS_FLOOR: u64 = 1_000_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HintSource {
    RetryAfter,
    RateLimitReset,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hint {
    /// How long from `now_ms` the server asks us to wait (0 for a date in the past).
    pub delay_ms: u64,
    pub source: HintSource,
}

/// The response headers the engine reads a hint from, lower-case, in `HintHeaders`' order: the
/// node copies exactly these from an answer (generated into the node's constants).
pub const HINT_HEADER_NAMES: [&str; 5] =
    ["retry-after", "ratelimit-reset", "x-ratelimit-reset", "ratelimit-remaining", "x-ratelimit-remaining"];

/// Headers of interest, names lower-cased as n8n's request helper returns them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HintHeaders {
    #[serde(default, rename = "retry-after")]
    pub retry_after: Option<String>,
    #[serde(default, rename = "ratelimit-reset")]
    pub ratelimit_reset: Option<String>,
    #[serde(default, rename = "x-ratelimit-reset")]
    pub x_ratelimit_reset: Option<String>,
    #[serde(default, rename = "ratelimit-remaining")]
    pub ratelimit_remaining: Option<String>,
    #[serde(default, rename = "x-ratelimit-remaining")]
    pub x_ratelimit_remaining: Option<String>,
}

/// The hint for a response, if any. Retry-After first; reset headers only on a 429 or when the
/// remaining quota is 0 (otherwise they describe a window we are still allowed to use).
pub fn hint(status: Option<u16>, headers: &HintHeaders, now_ms: u64) -> Option<Hint> {
    raw_hint(status, headers, now_ms).map(|h| Hint { delay_ms: h.delay_ms.min(MAX_HINT_MS), ..h })
}

fn raw_hint(status: Option<u16>, headers: &HintHeaders, now_ms: u64) -> Option<Hint> {
    if let Some(delay_ms) = headers.retry_after.as_deref().and_then(|v| parse_retry_after(v, now_ms)) {
        return Some(Hint { delay_ms, source: HintSource::RetryAfter });
    }
    let exhausted = [&headers.ratelimit_remaining, &headers.x_ratelimit_remaining]
        .iter()
        .any(|v| v.as_deref().map(str::trim) == Some("0"));
    if status == Some(429) || exhausted {
        let reset = headers.ratelimit_reset.as_deref().or(headers.x_ratelimit_reset.as_deref());
        if let Some(delay_ms) = reset.and_then(|v| parse_reset(v, now_ms)) {
            return Some(Hint { delay_ms, source: HintSource::RateLimitReset });
        }
    }
    None
}

/// `Retry-After: 120` or `Retry-After: Wed, 21 Oct 2015 07:28:00 GMT` (also RFC 850 and asctime).
/// Negative, fractional, garbage or missing: `None`. A date in the past: `Some(0)`.
pub fn parse_retry_after(value: &str, now_ms: u64) -> Option<u64> {
    let v = value.trim();
    if v.is_empty() || v.len() > MAX_HEADER_LEN {
        return None;
    }
    if v.bytes().all(|b| b.is_ascii_digit()) {
        return Some(seconds_to_ms(v));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    let at_ms = at.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_millis();
    Some(at_ms.saturating_sub(now_ms as u128).min(u64::MAX as u128) as u64)
}

/// `RateLimit-Reset`: delta-seconds, or an epoch when above 10^9 (seconds) / 10^12 (milliseconds).
/// Decimals are allowed (some vendors send `1.5`); negative or garbage: `None`.
pub fn parse_reset(value: &str, now_ms: u64) -> Option<u64> {
    let v = value.trim();
    if v.is_empty() || v.len() > MAX_HEADER_LEN || !v.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let x = decimal(v)?;
    let ms = if x > EPOCH_MILLIS_FLOOR as f64 {
        (x - now_ms as f64).max(0.0)
    } else if x > EPOCH_SECONDS_FLOOR as f64 {
        (x * 1000.0 - now_ms as f64).max(0.0)
    } else {
        x * 1000.0
    };
    Some(ms.min(u64::MAX as f64 / 2.0).ceil() as u64)
}

/// `digits[.digits]` as `str::parse::<f64>` reads it, without core's general float parser
/// (~17 KB of the WASM engine: tables and big-number code for inputs a header never has). Up to
/// 15 significant digits and 22 decimals the value is the same f64 (an integer below 2^53 over an
/// exact power of ten, one correctly rounded division: Clinger's fast path); digits past 2^53 are
/// dropped, a change far below the millisecond a hint is read to.
fn decimal(v: &str) -> Option<f64> {
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    if int.len() + frac.len() == 0 || frac.contains('.') {
        return None;
    }
    // The value is m × 10^exp; m takes digits while m × 10 + 9 stays below 2^53.
    const ROOM: u64 = ((1 << 53) - 9) / 10;
    let (mut m, mut exp) = (0u64, 0i32);
    for (i, b) in int.bytes().chain(frac.bytes()).enumerate() {
        let decimal_place = i >= int.len();
        if m < ROOM {
            m = m * 10 + u64::from(b - b'0');
            exp -= i32::from(decimal_place);
        } else if !decimal_place {
            exp += 1;
        }
    }
    let pow10 = |n: u32| (0..n).fold(1.0, |p: f64, _| p * 10.0);
    let m = m as f64;
    Some(match exp {
        0.. => m * pow10(exp as u32),
        -22..0 => m / pow10(exp.unsigned_abs()),
        _ => m / pow10(22) / pow10(exp.unsigned_abs() - 22),
    })
}

fn seconds_to_ms(digits: &str) -> u64 {
    // Absurdly long digit strings saturate: they mean "much longer than any cap".
    digits.parse::<u64>().map(|s| s.saturating_mul(1000)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2015-10-21T07:28:00Z
    const AT: u64 = 1_445_412_480_000;

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
            let h = HintHeaders { retry_after: Some(v.into()), ..Default::default() };
            assert_eq!(
                hint(Some(503), &h, AT),
                Some(Hint { delay_ms: MAX_HINT_MS, source: HintSource::RetryAfter }),
                "{v}"
            );
        }
        let h = HintHeaders { x_ratelimit_reset: Some("99999999999999999999".into()), ..Default::default() };
        assert_eq!(hint(Some(429), &h, AT).map(|h| h.delay_ms), Some(MAX_HINT_MS));
        let h = HintHeaders { retry_after: Some("3600".into()), ..Default::default() };
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
    fn decimals_read_as_core_reads_them() {
        for v in [
            "0",
            "7",
            "1.5",
            "1.",
            ".5",
            "0.001",
            "1445412482.5",
            "000012.340",
            "999999999999999",
            "0.000000000000000000000123",
        ] {
            assert_eq!(decimal(v), v.parse().ok(), "{v}");
        }
        for v in [".", "1.2.3", "..5"] {
            assert_eq!(decimal(v), None, "{v}");
        }
        // Past 15 significant digits or 22 decimals: within a few units in the last place.
        let tiny = format!("0.{}5", "0".repeat(30));
        for v in ["1445412482.123456789123456789", "99999999999999999999999", "9007199254740993", &tiny] {
            let (got, core) = (decimal(v).unwrap(), v.parse::<f64>().unwrap());
            assert!((got / core - 1.0).abs() < 1e-14, "{v}: {got} vs {core}");
        }
    }

    proptest::proptest! {
        #[test]
        fn decimals_up_to_fifteen_digits_are_exact(int in 0u64..1_000_000_000, frac in "[0-9]{0,6}") {
            let digits = int.to_string();
            let v = format!("{digits}.{frac}");
            proptest::prop_assert_eq!(decimal(&v), v.parse().ok());
            proptest::prop_assert_eq!(decimal(&digits), digits.parse().ok());
        }
    }

    #[test]
    fn reset_read_only_on_429_or_exhausted_quota() {
        let h = HintHeaders { x_ratelimit_reset: Some("7".into()), ..Default::default() };
        assert_eq!(hint(Some(503), &h, AT), None);
        assert_eq!(hint(Some(429), &h, AT), Some(Hint { delay_ms: 7_000, source: HintSource::RateLimitReset }));
        let h0 = HintHeaders { ratelimit_remaining: Some("0".into()), ..h.clone() };
        assert_eq!(hint(Some(503), &h0, AT).map(|h| h.delay_ms), Some(7_000));
    }

    #[test]
    fn retry_after_wins_over_reset() {
        let h = HintHeaders { retry_after: Some("2".into()), ratelimit_reset: Some("9".into()), ..Default::default() };
        assert_eq!(hint(Some(429), &h, AT), Some(Hint { delay_ms: 2_000, source: HintSource::RetryAfter }));
    }
}
