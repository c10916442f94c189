//! Delay schedule between attempts on one provider. Retry n (0-based) has the ceiling
//! `c(n) = min(cap, base * 2^n)`; the strategy decides where under it the delay falls.
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// `U(0, c)`: the best default, fully decorrelates concurrent clients (seed 003).
    #[default]
    FullJitter,
    /// `c/2 + U(0, c/2)`: never shorter than half the ceiling.
    EqualJitter,
    /// `min(cap, U(base, prev * 3))`: grows from the previous delay, not the attempt number.
    Decorrelated,
    /// Plain exponential `c`: in lockstep across clients; avoid in anything concurrent.
    None,
}

impl Strategy {
    /// From the names used in configuration (`full_jitter`, `equal_jitter`, `decorrelated`, `none`).
    pub fn parse(name: &str) -> Result<Strategy, crate::EngineError> {
        const ALL: [Strategy; 4] =
            [Strategy::FullJitter, Strategy::EqualJitter, Strategy::Decorrelated, Strategy::None];
        Ok(ALL[crate::error::one_of("strategy", "strategy", name, "full_jitter, equal_jitter, decorrelated, none")?])
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Backoff {
    pub strategy: Strategy,
    pub base_ms: u64,
    pub cap_ms: u64,
}

impl Backoff {
    /// The ceiling of retry `n`; seed 003 (300 ms, 8 s): 300, 600, 1200, 2400, 4800, 8000.
    pub fn ceiling(&self, n: u32) -> u64 {
        let factor = 1u64.checked_shl(n.min(63)).unwrap_or(u64::MAX);
        self.base_ms.saturating_mul(factor).min(self.cap_ms)
    }

    /// Delay before retry `n`; `prev_ms` is the previous delay (decorrelated only; 0 = none yet).
    pub fn delay(&self, n: u32, prev_ms: u64, rng: &mut Rng) -> u64 {
        let c = self.ceiling(n);
        match self.strategy {
            Strategy::FullJitter => rng.between(0, c),
            Strategy::EqualJitter => c / 2 + rng.between(0, c - c / 2),
            Strategy::Decorrelated => {
                let prev = if prev_ms == 0 { self.base_ms } else { prev_ms };
                rng.between(self.base_ms, prev.saturating_mul(3)).min(self.cap_ms)
            }
            Strategy::None => c,
        }
    }

    /// Inclusive bounds any delay of retry `n` falls in (decorrelated: over any history).
    pub fn bounds(&self, n: u32) -> (u64, u64) {
        let c = self.ceiling(n);
        match self.strategy {
            Strategy::FullJitter => (0, c),
            Strategy::EqualJitter => (c / 2, c),
            Strategy::Decorrelated => (self.base_ms.min(self.cap_ms), self.cap_ms),
            Strategy::None => (c, c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed003(strategy: Strategy) -> Backoff {
        Backoff { strategy, base_ms: 300, cap_ms: 8000 }
    }

    #[test]
    fn seed003_ceilings_come_out_exactly() {
        let b = seed003(Strategy::None);
        let ceilings: Vec<u64> = (0..6).map(|n| b.ceiling(n)).collect();
        assert_eq!(ceilings, [300, 600, 1200, 2400, 4800, 8000]);
        assert_eq!(ceilings.iter().sum::<u64>(), 17_300, "worst-case cumulative 17.3 s");
        assert_eq!(b.ceiling(200), 8000, "huge attempt numbers stay capped, no overflow");
    }

    #[test]
    fn full_jitter_is_really_random() {
        let b = seed003(Strategy::FullJitter);
        let mut rng = Rng::from_entropy();
        for n in 0..6 {
            let c = b.ceiling(n) as f64;
            let draws: Vec<u64> = (0..10_000).map(|_| b.delay(n, 0, &mut rng)).collect();
            let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
            assert!((mean - c / 2.0).abs() <= 0.05 * c / 2.0, "attempt {n}: mean {mean} vs {c}/2");
            assert!((*draws.iter().min().unwrap() as f64) < 0.05 * c);
            assert!((*draws.iter().max().unwrap() as f64) > 0.95 * c);
        }
    }

    #[test]
    fn equal_jitter_never_below_half_the_ceiling() {
        let b = seed003(Strategy::EqualJitter);
        let mut rng = Rng::seeded(3);
        for n in 0..8 {
            for _ in 0..1000 {
                let d = b.delay(n, 0, &mut rng);
                assert!(d >= b.ceiling(n) / 2 && d <= b.ceiling(n));
            }
        }
    }

    #[test]
    fn decorrelated_grows_from_previous_and_is_capped() {
        let b = seed003(Strategy::Decorrelated);
        let mut rng = Rng::seeded(5);
        let mut prev = 0;
        for n in 0..50 {
            let d = b.delay(n, prev, &mut rng);
            let upper = if prev == 0 { 900 } else { (prev * 3).min(8000) };
            assert!(d >= 300 && d <= upper.max(300), "{d} not in [300, {upper}]");
            prev = d;
        }
    }
}
