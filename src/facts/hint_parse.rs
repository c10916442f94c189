//! The value parsers of server hints, one per format a vendor sends: `Retry-After` (delta-seconds
//! or an HTTP date), `retry-after-ms`, `RateLimit-Reset` (delta-seconds or an epoch), Go durations
//! (OpenAI, Groq), RFC 3339 times (Anthropic) and Gemini's `retryDelay` in a body. Which value
//! wins is `retry_after`'s choice. Hand-written where core's parsers would weigh on the WASM engine.
use crate::facts::answer_body::BODY_LIMIT;
use crate::facts::civil::{civil_from_days, days_from_civil};

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
    let at_ms = http_date(v.as_bytes())?.saturating_mul(1000);
    Some(at_ms.saturating_sub(now_ms))
}

const WEEKDAYS: [&[u8]; 7] = [b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun"];
const LONG_WEEKDAYS: [&[u8]; 7] = [b"Monday", b"Tuesday", b"Wednesday", b"Thursday", b"Friday", b"Saturday", b"Sunday"];
const MONTHS: [&[u8]; 12] =
    [b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec"];

/// `v`'s number in `names`, from 1.
fn named(names: &[&[u8]], v: &[u8]) -> Option<i64> {
    names.iter().position(|n| *n == v).map(|k| k as i64 + 1)
}

/// An HTTP date (RFC 9110: IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 850 `Sunday,
/// 06-Nov-94 08:49:37 GMT`, asctime `Sun Nov  6 08:49:37 1994`) as seconds since the epoch.
/// Read as the `httpdate` crate reads one (a test holds them equal), whose parser weighed ~4 KB on
/// the WASM engine: years 1970-9999, a day the month has, the weekday that date's, no leap second.
fn http_date(v: &[u8]) -> Option<u64> {
    let two = |v: &[u8]| fields::<1>(v, b"dd").map(|[n]| n);
    let (wday, day, month, year, time) = match v.len() {
        29 if &v[3..5] == b", " && v[7] == b' ' && v[11] == b' ' && v[16] == b' ' && &v[25..] == b" GMT" => {
            let [year] = fields(&v[12..16], b"dddd")?;
            (named(&WEEKDAYS, &v[..3])?, two(&v[5..7])?, named(&MONTHS, &v[8..11])?, year, &v[17..25])
        }
        24 if v[3] == b' ' && v[7] == b' ' && v[10] == b' ' && v[19] == b' ' => {
            let day = if v[8] == b' ' { fields::<1>(&v[9..10], b"d")?[0] } else { two(&v[8..10])? };
            let [year] = fields(&v[20..24], b"dddd")?;
            (named(&WEEKDAYS, &v[..3])?, day, named(&MONTHS, &v[4..7])?, year, &v[11..19])
        }
        _ => {
            let comma = v.iter().position(|&b| b == b',')?;
            let rest = v[comma..].strip_prefix(b", ").filter(|r| r.len() == 22 && r.ends_with(b" GMT"))?;
            let (wday, yy) = (named(&LONG_WEEKDAYS, &v[..comma])?, two(&rest[7..9])?);
            // httpdate reads the byte between the year and the hour as any separator.
            if rest[2] != b'-' || rest[6] != b'-' {
                return None;
            }
            let year = yy + if yy < 70 { 2000 } else { 1900 };
            (wday, two(&rest[..2])?, named(&MONTHS, &rest[3..6])?, year, &rest[10..18])
        }
    };
    let [h, mi, s] = fields(time, b"dd:dd:dd")?;
    if !(1970..=9999).contains(&year) || h > 23 || mi > 59 || s > 59 || day == 0 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    // A day the month has (the 31st of April is no date), and the weekday of that date (1970-01-01
    // was a Thursday).
    if civil_from_days(days) != (year, month, day) || (days + 3) % 7 + 1 != wday {
        return None;
    }
    u64::try_from(days * 86_400 + h * 3600 + mi * 60 + s).ok()
}

/// `RateLimit-Reset`: delta-seconds, or an epoch when above 10^9 (seconds) / 10^12 (milliseconds).
/// Decimals are allowed (some vendors send `1.5`); negative or garbage: `None`.
pub fn parse_reset(value: &str, now_ms: u64) -> Option<u64> {
    let v = value.trim();
    if v.is_empty() || v.len() > MAX_HEADER_LEN || !v.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let x = decimal(v.as_bytes())?;
    let ms = if x > EPOCH_MILLIS_FLOOR as f64 {
        (x - now_ms as f64).max(0.0)
    } else if x > EPOCH_SECONDS_FLOOR as f64 {
        (x * 1000.0 - now_ms as f64).max(0.0)
    } else {
        x * 1000.0
    };
    Some(whole_ms(ms))
}

/// `digits[.digits]` as `str::parse::<f64>` reads it, without core's general float parser
/// (~17 KB of the WASM engine: tables and big-number code for inputs a header never has). Up to
/// 15 significant digits and 22 decimals the value is the same f64 (an integer below 2^53 over an
/// exact power of ten, one correctly rounded division: Clinger's fast path); digits past 2^53 are
/// dropped, a change far below the millisecond a hint is read to.
fn decimal(v: &[u8]) -> Option<f64> {
    decimal_exp(v, 0)
}

/// `digits[.digits]` × 10^`e` (a JSON number's exponent), read as [`decimal`] reads its digits.
pub(crate) fn decimal_exp(v: &[u8], e: i32) -> Option<f64> {
    let (int, frac) = match v.iter().position(|&b| b == b'.') {
        Some(dot) => (&v[..dot], &v[dot + 1..]),
        None => (v, &[][..]),
    };
    if int.len() + frac.len() == 0 || frac.contains(&b'.') {
        return None;
    }
    // The value is m × 10^exp; m takes digits while m × 10 + 9 stays below 2^53.
    const ROOM: u64 = ((1 << 53) - 9) / 10;
    let (mut m, mut exp) = (0u64, e);
    for (i, &b) in int.iter().chain(frac).enumerate() {
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

/// OpenAI's `retry-after-ms: 1500`: milliseconds, decimals allowed (`20.5`, read up); negative
/// or garbage: `None`.
pub fn parse_retry_after_ms(value: &str) -> Option<u64> {
    let v = value.trim().as_bytes();
    if v.len() > MAX_HEADER_LEN || !v.iter().all(|b| b.is_ascii_digit() || *b == b'.') {
        return None;
    }
    Some(whole_ms(decimal(v)?))
}

/// A Go duration as OpenAI and Groq send their resets (`6m0s`, `1.5s`, `20ms`, `1h2m3.5s`, `0s`;
/// also `us`/`µs` and `ns`, and a bare `0`), or a protobuf Duration's JSON text (`31.250s`), in
/// whole milliseconds, read up. Signed, unitless or garbage: `None`.
pub fn parse_duration(value: &str) -> Option<u64> {
    duration(value.trim().as_bytes())
}

/// [`parse_duration`] on bytes: a str cut would bring its char-boundary panic's formatting
/// (~5 KB of the WASM engine), and text from bytes a UTF-8 check.
fn duration(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > MAX_HEADER_LEN {
        return None;
    }
    if v == b"0" {
        return Some(0);
    }
    let number = |b: &u8| b.is_ascii_digit() || *b == b'.';
    let (mut rest, mut ms) = (v, 0.0);
    while !rest.is_empty() {
        let n = rest.iter().position(|b| !number(b)).unwrap_or(rest.len());
        let u = rest[n..].iter().position(number).map_or(rest.len(), |u| n + u);
        let scale = match &rest[n..u] {
            b"h" => 3_600_000.0,
            b"m" => 60_000.0,
            b"s" => 1_000.0,
            b"ms" => 1.0,
            b"us" | b"\xc2\xb5s" | b"\xce\xbcs" => 1e-3,
            b"ns" => 1e-6,
            _ => return None,
        };
        ms += decimal(&rest[..n])? * scale;
        rest = &rest[u..];
    }
    Some(whole_ms(ms))
}

/// An RFC 3339 time as Anthropic sends its resets (`2026-12-03T08:15:30Z`, with fractional
/// seconds or an offset such as `+00:00`): the time left until it, read up to the millisecond;
/// 0 when past. Garbage: `None`.
pub fn parse_rfc3339(value: &str, now_ms: u64) -> Option<u64> {
    let v = value.trim().as_bytes();
    if v.len() > MAX_HEADER_LEN {
        return None;
    }
    let [y, mo, d, h, mi, s] = fields(v, b"dddd-dd-ddTdd:dd:dd")?;
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut rest = &v[19..];
    // Fractional seconds: milliseconds, read up past the third digit.
    let mut frac_ms = 0;
    if let Some(frac) = rest.strip_prefix(b".") {
        let digits = frac.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        frac_ms =
            (0..3).fold(0, |n, k| n * 10 + frac.get(k).filter(|_| k < digits).map_or(0, |&b| i64::from(b - b'0')));
        frac_ms += i64::from(frac[..digits].iter().skip(3).any(|&b| b != b'0'));
        rest = &frac[digits..];
    }
    let offset_s = match rest {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), hh_mm @ ..] if hh_mm.len() == 5 => {
            let [oh, om] = fields(hh_mm, b"dd:dd")?;
            if oh > 23 || om > 59 {
                return None;
            }
            (oh * 3600 + om * 60) * if *sign == b'-' { -1 } else { 1 }
        }
        _ => return None,
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset_s;
    // Years 0000-9999: milliseconds well within i64; before 1970, past.
    Some(u64::try_from(secs * 1000 + frac_ms).unwrap_or(0).saturating_sub(now_ms))
}

/// The numbers in the start of `v` laid out as `template`: `d` a digit, anything else that
/// separator (`T` also `t` or a space, as RFC 3339 allows).
fn fields<const N: usize>(v: &[u8], template: &[u8]) -> Option<[i64; N]> {
    let mut f = [0; N];
    let mut k = 0;
    for (&t, &b) in template.iter().zip(v.get(..template.len())?) {
        if t == b'd' && b.is_ascii_digit() {
            f[k] = f[k] * 10 + i64::from(b - b'0');
        } else if t != b'd' && (b == t || (t == b'T' && (b == b't' || b == b' '))) {
            k += 1;
        } else {
            return None;
        }
    }
    Some(f)
}

/// Gemini's `google.rpc.RetryInfo` in an error body: `"retryDelay": "31s"` (a protobuf Duration:
/// `0.5s`, `31.250s`), in the body's first [`BODY_LIMIT`] bytes. Found by
/// its name, also where the body was quoted into a message (`\"retryDelay\": \"31s\"`).
pub fn body_retry_delay(body: &str) -> Option<u64> {
    const NAME: &[u8] = b"retryDelay";
    let head = &body.as_bytes()[..body.len().min(BODY_LIMIT)];
    let at = head.windows(NAME.len()).position(|w| w == NAME)? + NAME.len();
    fn skip(s: &[u8]) -> &[u8] {
        &s[s.iter().position(|b| !b" \t\r\n\"'\\".contains(b)).unwrap_or(s.len())..]
    }
    let rest = skip(skip(&head[at..]).strip_prefix(b":")?);
    let end = rest.iter().position(|b| !(b.is_ascii_alphanumeric() || *b == b'.')).unwrap_or(rest.len());
    duration(&rest[..end])
}

/// Milliseconds, read up to a whole one; past `u64::MAX / 2`, that.
fn whole_ms(ms: f64) -> u64 {
    ms.min(u64::MAX as f64 / 2.0).ceil() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_eq!(decimal(v.as_bytes()), v.parse().ok(), "{v}");
        }
        for v in [".", "1.2.3", "..5"] {
            assert_eq!(decimal(v.as_bytes()), None, "{v}");
        }
        // Past 15 significant digits or 22 decimals: within a few units in the last place.
        let tiny = format!("0.{}5", "0".repeat(30));
        for v in ["1445412482.123456789123456789", "99999999999999999999999", "9007199254740993", &tiny] {
            let (got, core) = (decimal(v.as_bytes()).unwrap(), v.parse::<f64>().unwrap());
            assert!((got / core - 1.0).abs() < 1e-14, "{v}: {got} vs {core}");
        }
    }

    proptest::proptest! {
        #[test]
        fn decimals_up_to_fifteen_digits_are_exact(int in 0u64..1_000_000_000, frac in "[0-9]{0,6}") {
            let digits = int.to_string();
            let v = format!("{digits}.{frac}");
            proptest::prop_assert_eq!(decimal(v.as_bytes()), v.parse().ok());
            proptest::prop_assert_eq!(decimal(digits.as_bytes()), digits.parse().ok());
        }
    }

    /// The date `secs` in each of HTTP's three layouts, written as a vendor would.
    fn layouts(secs: u64) -> [String; 3] {
        use crate::facts::civil::civil_from_days;
        let imf = httpdate::fmt_http_date(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs));
        let days = (secs / 86_400) as i64;
        let (y, m, d) = civil_from_days(days);
        let (wd, mon) = (WEEKDAYS[((days + 3) % 7) as usize], MONTHS[m as usize - 1]);
        let (long, text) =
            (LONG_WEEKDAYS[((days + 3) % 7) as usize], |b: &[u8]| String::from_utf8(b.to_vec()).unwrap());
        let t = secs % 86_400;
        let time = format!("{:02}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60);
        [
            imf,
            format!("{}, {d:02}-{}-{:02} {time} GMT", text(long), text(mon), y % 100),
            format!("{} {} {d:>2} {time} {y}", text(wd), text(mon)),
        ]
    }

    proptest::proptest! {
        /// Every layout of every date httpdate takes (RFC 850's two-digit years: 1970-2069) is
        /// read as httpdate reads it; so is any garbage near a date.
        #[test]
        fn http_dates_are_read_as_the_httpdate_crate_reads_them(secs in 0u64..253_402_300_799, cut in 0usize..40, junk in "[ A-Za-z0-9,:-]{0,3}") {
            for (k, date) in layouts(secs).into_iter().enumerate() {
                let theirs = |v: &str| httpdate::parse_http_date(v).ok()
                    .map(|t| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs());
                let year = secs / 31_556_952 + 1970;
                if k != 1 || (1970..2070).contains(&year) {
                    proptest::prop_assert_eq!(http_date(date.as_bytes()), Some(secs), "{}", date);
                }
                proptest::prop_assert_eq!(http_date(date.as_bytes()), theirs(&date), "{}", date);
                let mut broken = date.clone();
                broken.replace_range(cut.min(date.len())..(cut + junk.len()).min(date.len()), &junk);
                proptest::prop_assert_eq!(http_date(broken.trim().as_bytes()), theirs(&broken), "{}", broken);
            }
        }
    }

    #[test]
    fn a_wrong_weekday_a_day_the_month_lacks_a_leap_second_or_a_letter_d_is_no_date() {
        for bad in [
            "Mon, 06 Nov 1994 08:49:37 GMT",
            "Sun, 31 Apr 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:60 GMT",
            "Thu, 01 Jan 1970 00:00:00 UTC",
            "Sun, dd Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-9d 08:49:37 GMT",
        ] {
            assert_eq!(http_date(bad.as_bytes()), None, "{bad}");
            assert!(httpdate::parse_http_date(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_rfc3339("dddddddd1dddddddddd", 0), None, "a letter d in a digit's place");
    }
}
