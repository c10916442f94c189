//! A provider's recent latency, shared by the fleet in its own row (`latency`): a decaying
//! histogram of answered calls' durations on the store's clock, enough for a median and a p95.
//! Buckets grow by √2 from 10 ms; each sample weighs 1000 (rows hold integers) and every weight
//! halves each `HALF_LIFE_MS`, so the median follows a change within 1.5 half-lives whatever the
//! traffic. Only the latency routing (and what reads the p95) records samples.
use serde::{Deserialize, Serialize};

/// Upper bounds of the buckets in ms (the last one holds everything above 20.5 s).
pub const BOUNDS_MS: [u64; 24] = [
    10,
    14,
    20,
    28,
    40,
    57,
    80,
    113,
    160,
    226,
    320,
    453,
    640,
    905,
    1280,
    1810,
    2560,
    3620,
    5120,
    7240,
    10240,
    14480,
    20480,
    u64::MAX,
];
/// Weights halve every this long: after a change, the new latency is the median within it.
pub const HALF_LIFE_MS: u64 = 2_000;
/// One sample's weight.
pub const SAMPLE: u64 = 1000;
/// Below one sample's weight left, an estimate leans on the chain's mean (it is stale).
const PRIOR: u64 = SAMPLE;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct LatencyRow {
    /// Decayed weight per bucket (`BOUNDS_MS`), as of `at_ms`; empty before the first sample.
    pub w: Vec<u64>,
    /// The same for streamed calls' time to their first committing chunk, kept apart: a stream's
    /// whole length says how long the answer is, not how fast the model starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub t: Vec<u64>,
    pub at_ms: u64,
    pub version: u64,
}

/// The weights decayed to `now`: halved once per half-life, and linearly within one (2^-f is
/// taken as 1 - f/2: a float power would cost the WASM engine a maths library).
fn decayed(row: &LatencyRow, now: u64) -> Vec<u64> {
    decay(&row.w, row.at_ms, now)
}

fn decay(w: &[u64], at_ms: u64, now: u64) -> Vec<u64> {
    let dt = now.saturating_sub(at_ms);
    let halvings = dt / HALF_LIFE_MS;
    let frac = dt % HALF_LIFE_MS;
    w.iter()
        .map(|&w| {
            let w = if halvings >= 64 { 0 } else { w >> halvings };
            // No u128 here: its division would cost the WASM engine a kilobyte or two.
            w - w.saturating_mul(frac) / (2 * HALF_LIFE_MS)
        })
        .collect()
}

/// The row with one more sample of `ms`, as of `now`.
pub fn record(row: &LatencyRow, ms: u64, now: u64) -> LatencyRow {
    sample(row, ms, now, false)
}

/// The row with one more time to a first committing chunk of `ms`, as of `now`.
pub fn record_first_chunk(row: &LatencyRow, ms: u64, now: u64) -> LatencyRow {
    sample(row, ms, now, true)
}

fn sample(row: &LatencyRow, ms: u64, now: u64, first_chunk: bool) -> LatencyRow {
    let mut w = decayed(row, now);
    let mut t = decay(&row.t, row.at_ms, now);
    let lane = if first_chunk { &mut t } else { &mut w };
    lane.resize(BOUNDS_MS.len(), 0);
    let k = BOUNDS_MS.iter().position(|&b| ms <= b).unwrap_or(BOUNDS_MS.len() - 1);
    lane[k] = lane[k].saturating_add(SAMPLE);
    LatencyRow { w, t, at_ms: now.max(row.at_ms), version: row.version.wrapping_add(1) }
}

impl LatencyRow {
    /// The streamed calls' lane as a row of its own: what a streamed item's choices read.
    pub fn first_chunk(&self) -> LatencyRow {
        LatencyRow { w: self.t.clone(), t: Vec::new(), at_ms: self.at_ms, version: self.version }
    }

    /// The lane a call reads: its time to the first chunk when streamed, else its answer's.
    pub fn lane(&self, streamed: bool) -> std::borrow::Cow<'_, LatencyRow> {
        if streamed {
            std::borrow::Cow::Owned(self.first_chunk())
        } else {
            std::borrow::Cow::Borrowed(self)
        }
    }
}

/// What the row says at `now`: the median and p95 (bucket upper bounds, ms) and how much weight
/// they rest on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Estimate {
    pub p50_ms: u64,
    pub p95_ms: u64,
    pub weight: u64,
}

/// The longest duration a percentile reads as (the last bucket has no upper bound).
const CEILING_MS: u64 = BOUNDS_MS[BOUNDS_MS.len() - 2] * 2;

/// The weights decayed to `now` and their total; `None` before any weight.
fn weights(row: &LatencyRow, now: u64) -> Option<(Vec<u64>, u64)> {
    let w = decayed(row, now);
    // Saturating: a row is the fleet's, and a hostile one must not overflow a sum.
    let total = w.iter().take(BOUNDS_MS.len()).fold(0u64, |t, &x| t.saturating_add(x));
    (total > 0).then_some((w, total))
}

/// Where the `q`-th percentile falls: its bucket, the weight below the bucket, the bucket's own
/// weight and the weight the percentile needs; `None` when it lies past our buckets (a row from
/// the store may hold more buckets than ours: the extra ones are ignored).
fn locate(w: &[u64], total: u64, q: u64) -> Option<(usize, u64, u64, u64)> {
    let needed = (total / 100 * q + total % 100 * q / 100).max(1);
    let mut seen = 0u64;
    for (k, &x) in w.iter().take(BOUNDS_MS.len()).enumerate() {
        if seen.saturating_add(x) >= needed {
            return Some((k, seen, x, needed));
        }
        seen = seen.saturating_add(x);
    }
    None
}

pub fn estimate(row: &LatencyRow, now: u64) -> Option<Estimate> {
    let (w, total) = weights(row, now)?;
    let quantile = |q| locate(&w, total, q).map_or(CEILING_MS, |(k, ..)| BOUNDS_MS[k].min(CEILING_MS));
    Some(Estimate { p50_ms: quantile(50), p95_ms: quantile(95), weight: total })
}

/// The `q`-th percentile at `now` read between its bucket's bounds (linearly, by where the
/// percentile falls in the bucket's weight), with the weight it rests on: finer than a bucket's
/// upper bound, which can sit 41 % above the value (the hedge delay reads this).
pub fn quantile_ms(row: &LatencyRow, now: u64, q: u64) -> Option<(u64, u64)> {
    let (w, total) = weights(row, now)?;
    let ms = locate(&w, total, q).map_or(CEILING_MS, |(k, seen, x, needed)| {
        let low = if k == 0 { 0 } else { BOUNDS_MS[k - 1] };
        let high = BOUNDS_MS[k].min(CEILING_MS);
        // Weights are at most a few thousand samples' worth: the product stays in u64.
        low + (high - low).saturating_mul((needed - seen).min(x)) / x.max(1)
    });
    Some((ms, total))
}

/// The median a routing compares: the row's, leaning on `mean` (the chain's) as its weight
/// falls under one sample's, so a provider nobody measured lately is tried again.
pub fn typical_ms(row: &LatencyRow, now: u64, mean: u64) -> u64 {
    match estimate(row, now) {
        None => mean,
        Some(e) => {
            let own = e.weight.min(PRIOR);
            (e.p50_ms * own + mean * (PRIOR - own)) / PRIOR
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(samples: &[(u64, u64)]) -> LatencyRow {
        samples.iter().fold(LatencyRow::default(), |r, &(ms, at)| record(&r, ms, at))
    }

    #[test]
    fn the_median_and_p95_of_a_steady_provider() {
        let mut samples: Vec<(u64, u64)> = (0..95).map(|_| (100, 1_000)).collect();
        samples.extend((95..100).map(|_| (3_000, 1_000)));
        let e = estimate(&fed(&samples), 1_000).unwrap();
        assert_eq!(e.p50_ms, 113, "100 ms falls in the bucket up to 113 ms");
        assert_eq!(e.p95_ms, 113, "95 of 100 calls at 100 ms");
        let mut slow_tail: Vec<(u64, u64)> = (0..90).map(|_| (100, 1_000)).collect();
        slow_tail.extend((90..100).map(|_| (3_000, 1_000)));
        assert_eq!(estimate(&fed(&slow_tail), 1_000).unwrap().p95_ms, 3_620);
    }

    #[test]
    fn a_change_shows_in_the_median_within_two_half_lives() {
        // 20 calls a second at 100 ms for a minute, then 500 ms.
        let mut r = LatencyRow::default();
        for k in 0..1_200 {
            r = record(&r, 100, k * 50);
        }
        let change = 60_000;
        let mut flipped = None;
        for k in 0..400 {
            let t = change + k * 50;
            r = record(&r, 500, t);
            if flipped.is_none() && estimate(&r, t).unwrap().p50_ms >= 453 {
                flipped = Some(t - change);
            }
        }
        let after = flipped.expect("the median moved");
        // One half-life with an exact decay; the linear one within a half-life takes ~1.4.
        assert!(after <= 2 * HALF_LIFE_MS, "moved after {after} ms");
    }

    #[test]
    fn an_unmeasured_provider_reads_as_the_chains_mean_and_a_stale_one_drifts_to_it() {
        assert_eq!(typical_ms(&LatencyRow::default(), 0, 250), 250);
        let r = fed(&[(40, 0), (40, 1), (40, 2)]);
        assert_eq!(typical_ms(&r, 3, 250), 40, "fresh samples stand for themselves");
        let stale = typical_ms(&r, 10 * HALF_LIFE_MS, 250);
        assert!(stale > 200, "ten half-lives later the estimate is nearly the mean: {stale}");
    }

    #[test]
    fn a_percentile_is_read_between_its_buckets_bounds() {
        let row = fed(&(1..=100).map(|k| (80 + k * 80 / 100, 1_000)).collect::<Vec<_>>());
        // 100 calls spread over 80..160 ms: the p95 is about 156 ms, its bucket's bound 160.
        assert_eq!(estimate(&row, 1_000).unwrap().p95_ms, 160);
        let (p95, weight) = quantile_ms(&row, 1_000, 95).unwrap();
        assert!((146..=160).contains(&p95), "{p95}");
        assert_eq!(weight, 100 * SAMPLE);
        assert_eq!(quantile_ms(&LatencyRow::default(), 0, 95), None);
        let huge = quantile_ms(&fed(&[(u64::MAX, 0)]), 0, 95).unwrap().0;
        assert!(huge > BOUNDS_MS[BOUNDS_MS.len() - 2] && huge <= BOUNDS_MS[BOUNDS_MS.len() - 2] * 2, "{huge}");
    }

    #[test]
    fn a_streams_first_chunk_is_kept_apart_from_answers() {
        let answers = fed(&[(2_000, 0), (2_000, 0)]);
        let r = record_first_chunk(&answers, 100, 0);
        assert_eq!(estimate(&r, 0).unwrap().p50_ms, 2_560, "answers' lane as it was");
        assert_eq!(estimate(&r.first_chunk(), 0).unwrap().p50_ms, 113, "first chunks on their own");
        assert_eq!(r.version, answers.version + 1);
        // Both lanes decay together: a later answer sample halves the first chunks' weight too.
        let later = record(&r, 2_000, HALF_LIFE_MS);
        assert_eq!(later.t.iter().sum::<u64>(), SAMPLE / 2);
        assert_eq!(LatencyRow::default().first_chunk(), LatencyRow::default());
    }

    #[test]
    fn weights_decay_and_never_wrap() {
        let r = fed(&[(100, 0)]);
        assert_eq!(decayed(&r, HALF_LIFE_MS).iter().sum::<u64>(), SAMPLE / 2);
        assert_eq!(decayed(&r, u64::MAX).iter().sum::<u64>(), 0);
        assert_eq!(record(&r, u64::MAX, 1).w[BOUNDS_MS.len() - 1], SAMPLE);
    }
}
