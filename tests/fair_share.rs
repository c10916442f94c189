//! Fair share of a scarce vendor between keys (issue 59), on an injected clock: workers' seats
//! (the engine's own `fleet_limit::Seats`, take and release on one `limit` row) each count under
//! a key with a weight, against a vendor that takes K calls at once and answers 429 above. Each
//! key's share of the calls served, over the run and in every 5-second window, is held against
//! the exact max-min fair allocation of the vendor's K by weight (within 0.03 over the run, the
//! margin of Kubernetes' API Priority and Fairness `queueset_test.go`; 0.10 per window, the
//! issue's), and the vendor's slots kept busy. The vendor frees a slot a millisecond after its
//! answer, as a real server does: a call sent at once may meet a 429 at the limit itself.
use resilient_engine::limits::concurrency::Signal;
use resilient_engine::limits::fleet_limit::{self, Released, Rules, Take};
use resilient_engine::limits::learned_limit::LimitRow;
use resilient_engine::limits::priority::NORMAL;
use resilient_engine::limits::seat::Seats;
use resilient_engine::rng::Rng;
use std::collections::BTreeMap;

const SERVICE_MS: u64 = 250;
const RUN_MS: u64 = 120_000;
/// The first seconds are the limit's slow start and the keys' first takes: not counted.
const WARM_MS: u64 = 20_000;
const WINDOW_MS: u64 = 5_000;

/// A worker: the key it counts under, the key's weight, and how many calls it keeps out at once
/// when it may (its demand).
#[derive(Clone, Copy)]
struct Worker {
    key: &'static str,
    weight: u32,
    demand: u32,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Try(usize),
    Answer {
        worker: usize,
        congested: bool,
        sent: u64,
    },
    /// The vendor frees the call's slot: a few ms after its answer reached the worker (a real
    /// server counts a call until its response is flushed), so a call sent at once may meet a 429
    /// at the limit itself, as in real n8n.
    Free,
}

const RULES: Rules =
    Rules { start: 5, ceiling: u32::MAX, lease_ms: 20_000, renew_below_ms: 11_000, below_plateau: false, rank: NORMAL };

/// Calls served per key: over the counted run, and per 5-second window.
struct Served {
    total: BTreeMap<&'static str, u64>,
    windows: BTreeMap<u64, BTreeMap<&'static str, u64>>,
}

fn run(k: u32, workers: &[Worker], seed: u64) -> Served {
    let mut rng = Rng::seeded(seed);
    let mut seats: Vec<Seats> =
        workers.iter().enumerate().map(|(i, w)| Seats::new(format!("w{i}"), 1).keyed(w.key, w.weight)).collect();
    let mut row = LimitRow::default();
    let mut events: BTreeMap<(u64, u64), Ev> = BTreeMap::new();
    let mut seq = 0u64;
    let mut at = |events: &mut BTreeMap<(u64, u64), Ev>, t: u64, ev: Ev| {
        seq += 1;
        events.insert((t, seq), ev);
    };
    for (i, w) in workers.iter().enumerate() {
        for _ in 0..w.demand {
            at(&mut events, rng.between(0, 100), Ev::Try(i));
        }
    }
    let mut in_flight = 0u32;
    let mut served = Served { total: BTreeMap::new(), windows: BTreeMap::new() };
    while let Some(((now, _), ev)) = events.pop_first() {
        if now >= RUN_MS {
            break;
        }
        match ev {
            Ev::Try(i) => {
                let seat = &mut seats[i];
                let holder = seat.holder.clone();
                seat.seats[0].read(&row, &holder, now, RULES, true);
                let (go, grew) = match fleet_limit::take(&row, &seat.taker(0, false, RULES.start), now, RULES) {
                    Take::Local => (true, false),
                    Take::Write { row: next, grew } => {
                        row = next;
                        (true, grew)
                    }
                    Take::Full { register, .. } => {
                        row = register.unwrap_or(row);
                        (false, false)
                    }
                };
                seat.seats[0].read(&row, &holder, now, RULES, true);
                if !go {
                    // A waiting call looks again after 20-70 ms, as the node's paced wait does.
                    at(&mut events, now + 20 + rng.between(0, 50), Ev::Try(i));
                    continue;
                }
                seat.seats[0].sent(grew);
                in_flight += 1;
                let congested = in_flight > k;
                let ms = if congested { 1 } else { SERVICE_MS + rng.between(0, SERVICE_MS / 10) };
                at(&mut events, now + ms, Ev::Answer { worker: i, congested, sent: now });
            }
            Ev::Free => in_flight -= 1,
            Ev::Answer { worker: i, congested, sent } => {
                at(&mut events, now + rng.between(0, 1), Ev::Free);
                let seat = &mut seats[i];
                let signal = match congested {
                    true => Signal::Congested { failure: false },
                    false => Signal::Served { first_byte_ms: Some(now - sent) },
                };
                let heard = seat.seats[0].end(signal);
                let news = Released::new(seat.holder.clone(), true, seat.seats[0].in_use, congested, heard, sent);
                row = fleet_limit::release(&row, &news, now, RULES).unwrap_or(row);
                if !congested && now >= WARM_MS {
                    let key = workers[i].key;
                    *served.total.entry(key).or_default() += 1;
                    *served.windows.entry(now / WINDOW_MS).or_default().entry(key).or_default() += 1;
                }
                // A 429's Retry-After (1 s); a served call's worker calls again at once.
                let next = if congested { now + 1_000 + rng.between(0, 200) } else { now };
                at(&mut events, next, Ev::Try(i));
            }
        }
    }
    served
}

/// The exact max-min fair allocation of `k` calls at once between the keys, by weight, each
/// key asking for its workers' demand: the fraction of the calls each key gets.
fn max_min(k: u32, workers: &[Worker]) -> BTreeMap<&'static str, f64> {
    let mut keys: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for w in workers {
        let e = keys.entry(w.key).or_insert((f64::from(w.weight), 0.0));
        e.1 += f64::from(w.demand);
    }
    let mut out = BTreeMap::new();
    let mut left = f64::from(k);
    loop {
        let open: Vec<_> = keys.iter().filter(|(k, _)| !out.contains_key(*k)).collect();
        let weights: f64 = open.iter().map(|(_, (w, _))| w).sum();
        let level = left / weights;
        let satisfied: Vec<_> = open.iter().filter(|(_, (w, d))| *d < level * w).collect();
        if satisfied.is_empty() {
            for (key, (w, _)) in open {
                out.insert(*key, level * w);
            }
            break;
        }
        for (key, (_, d)) in satisfied {
            out.insert(*key, *d);
            left -= d;
        }
    }
    let total: f64 = out.values().sum();
    out.into_iter().map(|(key, calls)| (key, calls / total)).collect()
}

fn fractions(counts: &BTreeMap<&'static str, u64>) -> BTreeMap<&'static str, f64> {
    let total: u64 = counts.values().sum();
    counts.iter().map(|(k, n)| (*k, *n as f64 / total.max(1) as f64)).collect()
}

/// Each key's share of the calls served over the run within `margin` of max-min, and in every
/// 5-second window within `window_margin`; the vendor's slots busy at least `min_busy` of the time.
fn holds(k: u32, workers: &[Worker], margin: f64, window_margin: f64, min_busy: f64) {
    holds_for(&[1, 2, 3], k, workers, margin, window_margin, min_busy)
}

/// [`holds`] for `seeds` (a run of many workers is slow in a debug build).
fn holds_for(seeds: &[u64], k: u32, workers: &[Worker], margin: f64, window_margin: f64, min_busy: f64) {
    let want = max_min(k, workers);
    for &seed in seeds {
        let served = run(k, workers, seed);
        let got = fractions(&served.total);
        let calls: u64 = served.total.values().sum();
        // The mean call takes 1.05 x SERVICE_MS (its jitter).
        let busy = calls as f64 * SERVICE_MS as f64 * 1.05 / (f64::from(k) * (RUN_MS - WARM_MS) as f64);
        assert!(busy >= min_busy, "seed {seed}: the vendor's slots busy {busy:.3} of the time");
        for (key, w) in &want {
            let g = got.get(key).copied().unwrap_or(0.0);
            assert!((g - w).abs() <= margin, "seed {seed}: key {key} got {g:.3} of the calls, max-min {w:.3}: {got:?}");
        }
        for (window, counts) in &served.windows {
            let got = fractions(counts);
            for (key, w) in &want {
                let g = got.get(key).copied().unwrap_or(0.0);
                assert!(
                    (g - w).abs() <= window_margin,
                    "seed {seed}, window {window}: key {key} got {g:.3}, max-min {w:.3}: {got:?}"
                );
            }
        }
    }
}

fn worker(key: &'static str, weight: u32, demand: u32) -> Worker {
    Worker { key, weight, demand }
}

#[test]
fn two_keys_of_equal_weight_each_with_more_work_than_the_vendor_takes_get_half_each() {
    holds(8, &[worker("a", 1, 10), worker("b", 1, 10)], 0.03, 0.10, 0.7);
}

#[test]
fn two_keys_weighted_3_to_1_get_three_quarters_and_one_quarter() {
    holds(8, &[worker("a", 3, 10), worker("b", 1, 10)], 0.03, 0.10, 0.7);
}

#[test]
fn a_key_on_many_workers_gets_the_same_part_as_a_key_on_one() {
    let many: Vec<Worker> = (0..4).map(|_| worker("a", 1, 10)).chain([worker("b", 1, 10)]).collect();
    holds(8, &many, 0.03, 0.10, 0.7);
}

#[test]
fn a_key_asking_for_less_than_its_part_gets_all_it_asks_and_the_others_split_the_rest() {
    holds(8, &[worker("a", 1, 10), worker("b", 1, 10), worker("light", 1, 1)], 0.03, 0.10, 0.7);
}

#[test]
fn weights_2_1_1_beside_a_light_key_at_a_vendor_taking_16_and_two_keys_at_one_taking_4() {
    holds(16, &[worker("a", 2, 10), worker("b", 1, 10), worker("c", 1, 10), worker("light", 1, 2)], 0.03, 0.10, 0.7);
    // At 4 a cut to 3 leaves each key 1.5: the third slot goes to one and back (rounded down,
    // each left it to the other and it idled: busy 0.52).
    holds(4, &[worker("a", 1, 10), worker("b", 1, 10)], 0.03, 0.10, 0.65);
}

/// *Fair Share Key* and *Fair Share Weight*: a bad one names its field. (The key's default, the
/// workflow from Call Chain 2.2, is the node's to hand over: `tests/node-units`.)
#[test]
fn the_fair_share_key_and_weight_are_checked() {
    use resilient_engine::config::{ChainConfig, ProviderConfig};
    let chain = |key: &str, weight: i64| {
        let providers = vec![ProviderConfig { name: "m".into(), ..Default::default() }];
        ChainConfig { providers, fair_share_key: key.to_string(), fair_share_weight: weight, ..Default::default() }
            .validate()
            .map(|c| (c.share_key, c.share_weight))
            .map_err(|e| e.to_string())
    };
    assert_eq!(chain("customer-42", 3), Ok(("customer-42".into(), 3)));
    assert_eq!(chain("", 1), Ok((String::new(), 1)), "none: each worker a key of its own");
    for (key, weight, field) in
        [("k", 0, "fair_share_weight"), ("k", 1001, "fair_share_weight"), (&"k".repeat(201), 1, "fair_share_key")]
    {
        let err = chain(key, weight).unwrap_err();
        assert!(err.contains(field), "{key} {weight}: {err}");
    }
}

/// Six keys of three workers each, one at weight 3: its part is 6 of 16 calls, 2 a worker; each
/// other key's 2, two thirds of a call a worker. (At a vendor taking 4, where a part is a fraction
/// of a call per worker, the split misses: docs/priority.md, "Many keys at a few calls".)
#[test]
fn six_keys_on_three_workers_each_one_weighted_3_at_a_vendor_taking_16() {
    let keys = ["a", "b", "c", "d", "e", "f"];
    let workers: Vec<Worker> =
        keys.iter().flat_map(|&key| (0..3).map(move |_| worker(key, if key == "a" { 3 } else { 1 }, 10))).collect();
    holds_for(&[1], 16, &workers, 0.03, 0.10, 0.7);
}
