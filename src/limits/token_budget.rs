//! A provider's tokens per minute, shared by the fleet: every call reserves an estimate of its
//! tokens before it goes (its input, counted or approximated, plus the output it may write), and
//! settles at the usage its answer reports; a vendor's remaining-token count corrects the window
//! on every answer. A call that finds no room waits for the window to free it (or moves on).
//!
//! The window is a minute of 5-second buckets: a bucket counts whole while any of it is within
//! the last minute, so the sum never undercounts what the vendor's sliding minute holds (it
//! overcounts by at most one bucket: the price of an exact bound without a log of every call).
//! A provider keeps a window for its total and, where it limits them apart, one each for its
//! input and output. Sans-IO: [`reserve`], [`settle`] and [`correct`] read a window and propose
//! the next.
use serde::{Deserialize, Serialize};

/// Width of a bucket.
pub const BUCKET_MS: u64 = 5_000;
/// The window the limit is per.
pub const MINUTE_MS: u64 = 60_000;

/// The period a spend cap is per, in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    #[default]
    Day,
    Month,
}

/// The limits a row was last written under, whichever node (Call Chain, the chat model) set
/// them: Get Provider State reads what is left of them from the row alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Limits {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_minute: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_per_minute: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_per_minute: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spend_cap_micros: Option<u64>,
    pub period: Period,
}

/// A minute's window: (bucket start, tokens) for the buckets still within a minute, oldest first.
pub type Window = Vec<(u64, u64)>;

/// The tokens counted in each recent bucket, oldest first: the total (kept whenever the provider
/// limits tokens per minute at all: Get Provider State reads it), and the input and output apart
/// where the provider limits them apart (Anthropic's ITPM and OTPM).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct TokenRow {
    pub buckets: Window,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub input_buckets: Window,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub output_buckets: Window,
    /// The spend cap's period this row's `spent_micros` is of (its start, the store's clock).
    pub period_start_ms: u64,
    /// Spent in that period, in millionths of the user's currency unit.
    pub spent_micros: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    pub version: u64,
}

/// What a call may spend: its input (as estimated) and the most output it may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Estimate {
    pub input: u64,
    pub max_output: u64,
}

/// The input's tokens as reserved: the count given (the model's own tokenizer), or from its
/// characters: four Latin characters a token, one per CJK character (their scripts take about a
/// token each), and a quarter more for the approximation's error.
pub fn input_tokens(counted: Option<u64>, latin_chars: u64, cjk_chars: u64) -> u64 {
    counted.unwrap_or_else(|| {
        let approx = latin_chars.div_ceil(4) + cjk_chars;
        approx + approx.div_ceil(4)
    })
}

impl Estimate {
    pub fn tokens(&self) -> u64 {
        self.input + self.max_output
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reserve {
    /// Room now: the window with `need` counted in the current bucket.
    Granted { window: Window },
    /// No room: the window frees enough by `until_ms` (a call larger than the whole limit never
    /// fits: `until_ms` is then `u64::MAX`).
    Wait { until_ms: u64 },
}

fn bucket_of(now: u64) -> u64 {
    now - now % BUCKET_MS
}

/// The buckets still within the minute before `now`.
fn live(window: &[(u64, u64)], now: u64) -> impl Iterator<Item = &(u64, u64)> {
    window.iter().filter(move |(start, _)| start.saturating_add(BUCKET_MS + MINUTE_MS) > now)
}

/// Tokens counted in the last minute (whole buckets: any of a bucket within it counts it all).
pub fn used(window: &[(u64, u64)], now: u64) -> u64 {
    live(window, now).fold(0u64, |sum, (_, t)| sum.saturating_add(*t))
}

/// The window with `tokens` added to (or taken from) the bucket of `at`, expired buckets dropped.
fn add(window: &[(u64, u64)], now: u64, at: u64, tokens: i64) -> Window {
    let mut buckets: Window = live(window, now).copied().collect();
    let b = bucket_of(at);
    match buckets.iter_mut().find(|(s, _)| *s == b) {
        Some((_, t)) => *t = t.saturating_add_signed(tokens),
        None if tokens > 0 && b.saturating_add(BUCKET_MS + MINUTE_MS) > now => {
            // Kept in order by inserting in place (no sort: the WASM engine carries none).
            let at = buckets.partition_point(|(s, _)| *s < b);
            buckets.insert(at, (b, tokens as u64));
        }
        None => {}
    }
    buckets
}

/// Reserve `need` tokens against `per_minute` at `now`.
pub fn reserve(window: &[(u64, u64)], per_minute: u64, need: u64, now: u64) -> Reserve {
    if need > per_minute {
        return Reserve::Wait { until_ms: u64::MAX };
    }
    let in_use = used(window, now);
    if in_use.saturating_add(need) <= per_minute {
        return Reserve::Granted { window: add(window, now, now, need as i64) };
    }
    // The oldest buckets leave first: when enough of them have left, it fits.
    let mut left = in_use;
    for (start, tokens) in live(window, now) {
        left = left.saturating_sub(*tokens);
        if left.saturating_add(need) <= per_minute {
            return Reserve::Wait { until_ms: start.saturating_add(BUCKET_MS + MINUTE_MS) };
        }
    }
    Reserve::Wait { until_ms: now.saturating_add(MINUTE_MS) }
}

/// A call reserved at `reserved_at` ended: its bucket holds `used` tokens instead of `reserved`
/// (the usage its answer reported; without one, the reservation stands).
pub fn settle(window: &[(u64, u64)], reserved_at: u64, reserved: u64, used: u64, now: u64) -> Option<Window> {
    (used != reserved).then(|| add(window, now, reserved_at, used as i64 - reserved as i64))
}

/// The vendor said `remaining` tokens are left in its minute, full again at `full_at_ms` where it
/// said when: where it counts more than the window does, the window takes the difference (never
/// less: our reservations of calls not yet at the vendor are ours to keep), in the bucket that
/// leaves the window when the vendor's minute is full again (the current one when it did not say;
/// nothing when it is full already).
pub fn correct(
    window: &[(u64, u64)],
    per_minute: u64,
    remaining: u64,
    full_at_ms: Option<u64>,
    now: u64,
) -> Option<Window> {
    let vendor_used = per_minute.saturating_sub(remaining);
    let ours = used(window, now);
    let at = match full_at_ms {
        Some(t) if t <= now => return None,
        Some(t) => t.saturating_sub(MINUTE_MS).min(now),
        None => now,
    };
    (vendor_used > ours).then(|| add(window, now, at, (vendor_used - ours) as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn granted(r: Reserve) -> Window {
        match r {
            Reserve::Granted { window } => window,
            other => panic!("{other:?}"),
        }
    }

    const E: u64 = 4_000;

    #[test]
    fn calls_reserve_until_the_minute_is_full_then_wait_for_the_oldest_bucket_to_leave() {
        let mut row = Window::default();
        for k in 0..5 {
            row = granted(reserve(&row, 20_000, E, k * 6_000));
        }
        assert_eq!(used(&row, 24_000), 20_000);
        assert_eq!(reserve(&row, 20_000, E, 25_000), Reserve::Wait { until_ms: 65_000 });
        assert!(matches!(reserve(&row, 20_000, E, 64_999), Reserve::Wait { .. }), "its last ms is in the minute");
        assert!(matches!(reserve(&row, 20_000, E, 65_000), Reserve::Granted { .. }), "the first bucket left");
        assert_eq!(reserve(&[], 20_000, 30_000, 0), Reserve::Wait { until_ms: u64::MAX });
    }

    #[test]
    fn a_call_settles_at_its_usage_in_the_bucket_it_reserved_in() {
        let row = granted(reserve(&[], 20_000, E, 1_000));
        let row = settle(&row, 1_000, 4_000, 2_500, 7_000).unwrap();
        assert_eq!(used(&row, 7_000), 2_500);
        assert_eq!(settle(&row, 1_000, 4_000, 4_000, 8_000), None, "no usage reported: nothing to write");
    }

    #[test]
    fn the_vendors_remaining_count_raises_the_window_never_lowers_it() {
        let row = granted(reserve(&[], 20_000, E, 0));
        let row = correct(&row, 20_000, 10_000, None, 1_000).unwrap();
        assert_eq!(used(&row, 1_000), 10_000);
        assert_eq!(correct(&row, 20_000, 15_000, None, 2_000), None);
    }

    #[test]
    fn the_vendors_count_leaves_the_window_when_the_vendor_says_its_minute_is_full_again() {
        const T: u64 = 1_000_000;
        // At T + 30 s the vendor holds 8000 tokens we never saw, and is full again in 2 s: they
        // leave the window within a bucket of then, not a minute later.
        let row = correct(&[], 10_000, 2_000, Some(T + 32_000), T + 30_000).unwrap();
        assert_eq!(used(&row, T + 30_000), 8_000);
        assert!(
            matches!(reserve(&row, 10_000, 5_000, T + 31_000), Reserve::Wait { until_ms } if until_ms <= T + 37_000)
        );
        assert!(matches!(reserve(&row, 10_000, 5_000, T + 37_000), Reserve::Granted { .. }));
        assert_eq!(correct(&[], 10_000, 2_000, Some(T + 30_000), T + 30_000), None, "full again already");
        let row = correct(&[], 10_000, 2_000, None, T + 30_000).unwrap();
        assert!(matches!(reserve(&row, 10_000, 5_000, T + 37_000), Reserve::Wait { .. }), "unsaid: a minute");
    }

    #[test]
    fn the_input_is_counted_when_a_tokenizer_counted_it_else_approximated_with_a_margin() {
        assert_eq!(input_tokens(Some(123), 4_000, 0), 123);
        assert_eq!(input_tokens(None, 4_000, 0), 1_250, "1000 tokens and a quarter");
        assert_eq!(input_tokens(None, 0, 800), 1_000, "a token per CJK character, and a quarter");
    }
}
