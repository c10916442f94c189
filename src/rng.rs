//! Jitter randomness: xoshiro256++ seeded once per process from the OS (getrandom), because one
//! getrandom call from WASM costs ~2.4 us and a delay decision must stay well under that.
//! Tests inject a seed; there is no constant default seed.

#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// Seeded from the operating system (crypto.getRandomValues under WASM).
    pub fn from_entropy() -> Self {
        let mut buf = [0u8; 8];
        // If the OS source fails there is no safe fallback that keeps processes decorrelated.
        if getrandom::fill(&mut buf).is_err() {
            panic!("getrandom failed: no entropy source");
        }
        Self::seeded(u64::from_le_bytes(buf))
    }

    /// Deterministic stream for tests and the simulator.
    pub fn seeded(seed: u64) -> Self {
        let mut sm = seed;
        let mut next = || {
            // SplitMix64 expands one word into the four xoshiro words (never all zero).
            sm = sm.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = sm;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng { s: [next(), next(), next(), next()] }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform integer in `lo..=hi` (returns `lo` when `hi <= lo`).
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo + 1;
        // 128-bit multiply-shift: unbiased enough for jitter and branch-free.
        lo + ((self.next_u64() as u128 * span as u128) >> 64) as u64
    }

    /// Uniform in `[0, 1)`: the top 53 bits as a double's mantissa.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn between_stays_in_range_and_reaches_both_ends() {
        let mut r = Rng::seeded(7);
        let draws: Vec<u64> = (0..10_000).map(|_| r.between(10, 20)).collect();
        assert!(draws.iter().all(|d| (10..=20).contains(d)));
        assert!(draws.contains(&10) && draws.contains(&20));
    }

    #[test]
    fn entropy_seeds_differ() {
        assert_ne!(Rng::from_entropy().next_u64(), Rng::from_entropy().next_u64());
    }
}
