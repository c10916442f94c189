//! Server hints: `parse_retry_after`, `parse_reset` and `hint` on arbitrary header values and
//! clocks. Never a panic, and each result matches what the header says. The vendors' own readers
//! (`parse_retry_after_ms`, `parse_duration`, `parse_rfc3339`, `body_retry_delay`): never a panic,
//! bounded, and an RFC 3339 wait never grows with the clock.
//!
//! Input: lines separated by `\n`: now_ms, status, then the header values retry-after,
//! ratelimit-reset, x-ratelimit-reset, ratelimit-remaining, x-ratelimit-remaining. A missing or
//! empty line is a missing header. The whole input is also tried as one header value.
#![no_main]
use libfuzzer_sys::fuzz_target;
use resilient_engine::facts::retry_after::{
    body_retry_delay, hint, parse_duration, parse_reset, parse_retry_after, parse_retry_after_ms, parse_rfc3339, Hint,
    HintHeaders, HintSource, EPOCH_SECONDS_FLOOR, MAX_HINT_MS,
};
use std::time::{Duration, UNIX_EPOCH};

const MAX_HEADER_LEN: usize = 128;
/// 9999-12-31T23:59:59Z + 1 s: no HTTP-date is later (httpdate's own bound).
const END_OF_DATES_S: u64 = 253_402_300_800;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let mut field = || lines.next().filter(|l| !l.is_empty()).map(str::to_string);
    let now_ms: u64 = field().and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    let status: Option<u16> = field().and_then(|v| v.trim().parse().ok());
    let mut headers = HintHeaders::default();
    for name in ["retry-after", "ratelimit-reset", "x-ratelimit-reset", "ratelimit-remaining", "x-ratelimit-remaining"]
    {
        headers.set(name, field());
    }

    for v in
        [Some(&*text), headers.get("retry-after"), headers.get("ratelimit-reset"), headers.get("x-ratelimit-reset")]
            .into_iter()
            .flatten()
    {
        check_retry_after(v, now_ms);
        check_reset(v, now_ms);
        check_vendor_readers(v, now_ms);
    }
    check_hint(status, &headers, now_ms);
    check_date_forms(data, now_ms);
});

/// Delta-seconds give exactly that many seconds (saturating), HTTP-dates the time left until
/// them, anything else nothing.
fn check_retry_after(v: &str, now: u64) {
    let got = parse_retry_after(v, now);
    let t = v.trim();
    if t.is_empty() || t.len() > MAX_HEADER_LEN {
        assert_eq!(got, None, "empty or oversized {v:?}");
        return;
    }
    if t.bytes().all(|b| b.is_ascii_digit()) {
        let want = t.parse::<u64>().map(|s| s.saturating_mul(1000)).unwrap_or(u64::MAX);
        assert_eq!(got, Some(want), "delta-seconds {t:?} must give a hint");
        return;
    }
    if t.starts_with(['-', '+']) || (t.contains('.') && t.bytes().all(|b| b.is_ascii_digit() || b == b'.')) {
        assert_eq!(got, None, "signed or fractional {t:?} is no hint");
    }
    let is_date = httpdate::parse_http_date(t).is_ok();
    assert_eq!(got.is_some(), is_date, "only an HTTP-date gives a hint: {t:?}");
    if let Some(d) = got {
        let at = parse_retry_after(v, 0).expect("same date at epoch 0");
        assert!(at % 1000 == 0 && at < END_OF_DATES_S * 1000, "{t:?} at {at}");
        assert_eq!(d, at.saturating_sub(now), "{t:?}: time left until the date");
    }
}

/// Reset values: decimals allowed, never negative, monotone in the clock, bounded.
fn check_reset(v: &str, now: u64) {
    let got = parse_reset(v, now);
    let t = v.trim();
    let shaped = !t.is_empty() && t.len() <= MAX_HEADER_LEN && t.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let x = t.parse::<f64>().ok().filter(|_| shaped);
    assert_eq!(got.is_some(), x.is_some(), "{t:?}");
    let (Some(d), Some(x)) = (got, x) else { return };
    assert!(d <= u64::MAX / 2 + 1, "{t:?} gave {d}");
    if x <= EPOCH_SECONDS_FLOOR as f64 {
        // Read exactly as core reads it up to 15 significant digits and 22 decimals; past that
        // the engine drops digits (no float parser in the WASM engine): at most 1 ms apart.
        let want = (x * 1000.0).ceil() as u64;
        let significant = t.trim_start_matches(['0', '.']).bytes().filter(u8::is_ascii_digit).count();
        let decimals = t.split_once('.').map_or(0, |(_, f)| f.len());
        if significant <= 15 && decimals <= 22 {
            assert_eq!(d, want, "delta-seconds {t:?}");
        } else {
            assert!(d.abs_diff(want) <= 1, "delta-seconds {t:?}: {d} vs {want}");
        }
        if t.bytes().all(|b| b.is_ascii_digit()) {
            assert_eq!(d, t.parse::<u64>().unwrap() * 1000, "{t:?}");
        }
    }
    for later in [now.saturating_add(1), now.saturating_add(1_000), now.saturating_add(86_400_000), u64::MAX] {
        let d2 = parse_reset(v, later).expect("same value, later clock");
        assert!(d2 <= d, "{t:?}: {d2} at {later} > {d} at {now}");
    }
}

/// The reference rule: Retry-After first; the reset family only on a 429 or an exhausted quota;
/// a hint longer than a century is read as a century (`MAX_HINT_MS`).
fn check_hint(status: Option<u16>, h: &HintHeaders, now: u64) {
    let got = hint(status, h, now);
    let want = if let Some(d) = h.get("retry-after").and_then(|v| parse_retry_after(v, now)) {
        Some(Hint { delay_ms: d, source: HintSource::RetryAfter })
    } else {
        let exhausted =
            ["ratelimit-remaining", "x-ratelimit-remaining"].iter().any(|n| h.get(n).is_some_and(|s| s.trim() == "0"));
        let reset = h.get("ratelimit-reset").or(h.get("x-ratelimit-reset"));
        (status == Some(429) || exhausted)
            .then(|| reset.and_then(|v| parse_reset(v, now)))
            .flatten()
            .map(|d| Hint { delay_ms: d, source: HintSource::RateLimitReset })
    };
    let want = want.map(|w| Hint { delay_ms: w.delay_ms.min(MAX_HINT_MS), ..w });
    assert_eq!(got, want, "{status:?} {h:?} at {now}");
    assert!(got.is_none_or(|g| g.delay_ms <= MAX_HINT_MS), "{got:?}");
}

/// The vendors' readers: no panic, at most `u64::MAX / 2` (read up from a float), and the time
/// left until an RFC 3339 time never grows with the clock; a body's delay is its duration's.
fn check_vendor_readers(v: &str, now: u64) {
    let bound = |d: Option<u64>| assert!(d.is_none_or(|d| d <= u64::MAX / 2 + 1), "{v:?}: {d:?}");
    bound(parse_retry_after_ms(v));
    bound(parse_duration(v));
    if let Some(d) = parse_rfc3339(v, now) {
        let later = parse_rfc3339(v, now.saturating_add(1_000)).expect("same time, later clock");
        assert!(later <= d, "{v:?}: {later} after {d}");
    }
    let t = v.trim();
    if t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.') {
        let body = format!("{{\"retryDelay\": \"{t}\"}}");
        assert_eq!(body_retry_delay(&body), parse_duration(t), "{body:?}");
    }
    bound(body_retry_delay(v));
}

/// One instant in all three HTTP-date forms: each gives the same, exact wait.
fn check_date_forms(data: &[u8], now: u64) {
    let secs = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
        % END_OF_DATES_S;
    let imf = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs));
    // "Sun, 06 Nov 1994 08:49:37 GMT"
    let (wd, day, mon, year, time) = (&imf[0..3], &imf[5..7], &imf[8..11], &imf[12..16], &imf[17..25]);
    let full = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        .into_iter()
        .find(|n| n.starts_with(wd))
        .unwrap();
    let asctime = format!("{wd} {mon} {:>2} {time} {year}", day.trim_start_matches('0'));
    let want = Some((secs * 1000).saturating_sub(now));
    let mut forms = vec![imf.clone(), asctime, format!(" \t{imf} ")];
    let y: u64 = year.parse().unwrap();
    if (1970..2070).contains(&y) {
        forms.push(format!("{full}, {day}-{mon}-{} {time} GMT", &year[2..]));
    }
    for f in forms {
        assert_eq!(parse_retry_after(&f, now), want, "{f:?} at {now}");
    }
}
