//! Routing: the order in which one item visits the chain's providers. Providers are grouped by
//! tier (1 first); within a tier the chain's routing picks the order: `order` (as configured:
//! today's fallback chain), `weighted` (random, in proportion to the weights: the load shared),
//! `least_busy` (fewest calls in flight fleet-wide, ties at random). The order is fixed at the
//! item's first poll, so a provider's retries stay on it and a failure moves on to the next
//! choice, then the next tier, exactly as a configured order does. A provider of weight 0 is
//! drained: last in its tier, it takes no new calls, only the half-open probe its breaker needs
//! when an item gets that far.
use crate::choose::latency::{estimate, typical_ms, LatencyRow};
use crate::config::{Chain, Routing};
use crate::limits::lease::live;
use crate::rng::Rng;
use crate::rows::ProviderView;
use serde::{Deserialize, Serialize};

/// How one item's order was chosen, for its run data (left out under plain `order` in one tier).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    pub routing: Routing,
    /// Provider indexes, the first choice first.
    pub order: Vec<usize>,
}

/// The visit order of one item, from the rows read at its first poll. Chains are short: plain
/// loops and an insertion sort keep std's sort machinery out of the WASM engine (~15 KB).
/// `streamed`: the latency routing compares times to the first chunk, not whole answers.
pub fn route(chain: &Chain, views: &[ProviderView], now: u64, rng: &mut Rng, streamed: bool) -> Vec<usize> {
    let n = chain.providers.len();
    let mut order = Vec::with_capacity(n);
    let mut tier = 0;
    while order.len() < n {
        // The next tier up: the smallest above the last one visited.
        tier = chain.providers.iter().map(|p| p.tier).filter(|&t| t > tier).min().unwrap_or(u32::MAX);
        let mut members: Vec<usize> = (0..n).filter(|&i| chain.providers[i].tier == tier).collect();
        match chain.routing {
            Routing::Order => {}
            Routing::Weighted => members = weighted(chain, members, rng),
            Routing::LeastBusy => {
                shuffle(&mut members, rng); // ties at random: workers do not pile onto one
                let busy = |i: usize| live(&views[i].in_flight.leases, now).len();
                insertion_sort_by_key(&mut members, busy);
            }
            Routing::Latency => {
                let lanes: Vec<_> = views.iter().map(|v| v.latency.lane(streamed)).collect();
                members = fastest_first(chain, &lanes, now, members, rng);
            }
        }
        // A drained provider goes last in its tier (it takes a probe at most).
        insertion_sort_by_key(&mut members, |i| (chain.providers[i].weight == 0.0) as usize);
        order.extend(members);
    }
    order
}

/// Within this share of the fastest median, providers count as equally fast (LiteLLM's
/// `lowest_latency_buffer`): the fastest is not swamped, and its peers keep being measured.
pub const LATENCY_BUFFER_PERCENT: u64 = 20;
/// This share of items (per mille) tries a provider of the tier at random first, so one that got
/// faster is noticed even while the estimates say otherwise.
pub const EXPLORE_PER_MILLE: u64 = 50;

/// Latency routing: the fastest by recent median first (at random, by weight, among those within
/// the buffer of the fastest), the rest from fastest to slowest; now and then one at random.
fn fastest_first(
    chain: &Chain,
    lanes: &[std::borrow::Cow<'_, LatencyRow>],
    now: u64,
    mut members: Vec<usize>,
    rng: &mut Rng,
) -> Vec<usize> {
    let n = lanes.len() as u64;
    // The chain's mean of what is known: what a provider nobody measured lately reads as.
    let known: Vec<u64> = lanes.iter().filter_map(|l| estimate(l, now)).map(|e| e.p50_ms).collect();
    let mean = if known.is_empty() { 0 } else { known.iter().sum::<u64>() / known.len() as u64 };
    let typical = |i: usize| typical_ms(&lanes[i], now, mean) as usize;
    shuffle(&mut members, rng);
    insertion_sort_by_key(&mut members, typical);
    if rng.between(0, 999) < EXPLORE_PER_MILLE && n > 0 {
        let k = rng.between(0, members.len() as u64 - 1) as usize;
        let pick = members.remove(k);
        members.insert(0, pick);
        return members;
    }
    let Some(&first) = members.first() else { return members };
    let limit = typical(first) as u64 * (100 + LATENCY_BUFFER_PERCENT) / 100;
    let peers = members.iter().take_while(|&&i| typical(i) as u64 <= limit).count();
    let mut head = weighted(chain, members[..peers].to_vec(), rng);
    head.extend_from_slice(&members[peers..]);
    head
}

/// Stable: equal keys keep their order.
fn insertion_sort_by_key(v: &mut [usize], key: impl Fn(usize) -> usize) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && key(v[j - 1]) > key(v[j]) {
            v.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// Weighted sampling without replacement: each next choice in proportion to the weights left.
fn weighted(chain: &Chain, mut left: Vec<usize>, rng: &mut Rng) -> Vec<usize> {
    let mut out = Vec::with_capacity(left.len());
    while !left.is_empty() {
        let total: f64 = left.iter().map(|&i| chain.providers[i].weight).sum();
        if total <= 0.0 {
            out.append(&mut left); // only drained ones remain
            break;
        }
        let mut x = rng.unit() * total;
        let mut k = left.len() - 1;
        for (j, &i) in left.iter().enumerate() {
            let w = chain.providers[i].weight;
            if x < w {
                k = j;
                break;
            }
            x -= w;
        }
        // Float rounding may run past the end: the last provider of positive weight takes it.
        while chain.providers[left[k]].weight == 0.0 {
            k -= 1;
        }
        out.push(left.remove(k));
    }
    out
}

fn shuffle(v: &mut [usize], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        let j = rng.between(0, i as u64) as usize;
        v.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ChainConfig, ProviderConfig};
    use crate::limits::in_flight::InFlightRow;
    use crate::limits::lease::Lease;

    fn chain(routing: &str, providers: &[(&str, i64, f64)]) -> Chain {
        ChainConfig {
            providers: providers
                .iter()
                .map(|&(name, tier, weight)| ProviderConfig {
                    name: name.into(),
                    tier: Some(tier),
                    weight: Some(weight),
                    ..Default::default()
                })
                .collect(),
            routing: routing.into(),
            ..Default::default()
        }
        .validate()
        .unwrap()
    }

    fn views3() -> Vec<ProviderView> {
        vec![ProviderView::default(); 3]
    }

    fn firsts(c: &Chain, views: &[ProviderView], n: usize) -> Vec<usize> {
        let mut rng = Rng::seeded(7);
        let mut counts = vec![0; c.providers.len()];
        for _ in 0..n {
            counts[route(c, views, 0, &mut rng, false)[0]] += 1;
        }
        counts
    }

    #[test]
    fn order_in_one_tier_is_the_configured_chain() {
        let c = chain("order", &[("a", 1, 1.0), ("b", 1, 1.0), ("c", 1, 1.0)]);
        assert_eq!(route(&c, &views3(), 0, &mut Rng::seeded(1), false), vec![0, 1, 2]);
    }

    #[test]
    fn weights_three_to_one_share_the_first_choice_three_to_one() {
        let c = chain("weighted", &[("a", 1, 3.0), ("b", 1, 1.0)]);
        let n = firsts(&c, &views3()[..2], 20_000);
        let share = n[0] as f64 / 20_000.0;
        assert!((0.73..0.77).contains(&share), "{n:?}");
    }

    #[test]
    fn a_drained_provider_is_never_a_first_choice_and_comes_last() {
        let c = chain("weighted", &[("a", 1, 0.0), ("b", 1, 1.0), ("c", 1, 1.0)]);
        let views = [ProviderView::default(), ProviderView::default(), ProviderView::default()];
        assert_eq!(firsts(&c, &views, 2_000)[0], 0);
        let mut rng = Rng::seeded(3);
        for _ in 0..100 {
            assert_eq!(route(&c, &views, 0, &mut rng, false)[2], 0);
        }
        let o = chain("order", &[("a", 1, 0.0), ("b", 1, 1.0)]);
        assert_eq!(route(&o, &views[..2], 0, &mut rng, false), vec![1, 0]);
    }

    #[test]
    fn a_lower_tier_is_visited_only_after_every_provider_of_the_tier_above() {
        let c = chain("weighted", &[("b", 2, 1.0), ("a1", 1, 1.0), ("a2", 1, 1.0)]);
        let mut rng = Rng::seeded(9);
        for _ in 0..200 {
            assert_eq!(route(&c, &views3(), 0, &mut rng, false)[2], 0);
        }
    }

    #[test]
    fn least_busy_goes_first_to_the_provider_with_fewest_calls_in_flight_fleet_wide() {
        let c = chain("least_busy", &[("slow", 1, 1.0), ("fast", 1, 1.0)]);
        let busy = |n: usize| ProviderView {
            in_flight: InFlightRow {
                leases: (0..n).map(|k| Lease { holder: format!("h{k}"), until_ms: 1_000 }).collect(),
                version: 1,
            },
            ..Default::default()
        };
        assert_eq!(firsts(&c, &[busy(3), busy(1)], 100), vec![0, 100]);
        // Leases past their end do not count: a crashed worker's calls are not in flight.
        let mut rng = Rng::seeded(1);
        assert_eq!(route(&c, &[busy(3), busy(1)], 2_000, &mut rng, false).len(), 2);
        let even = firsts(&c, &[busy(2), busy(2)], 1_000);
        assert!(even[0] > 400 && even[1] > 400, "ties at random: {even:?}");
    }
}
