//! The one congestion rule, used at three scopes that each keep their own state: an execution's
//! window (`concurrency`, per served call, in fractions), the fleet's learned limit and a worker's
//! share of it (`fleet_limit`, per round of a share, in whole calls). Both ask the two functions
//! here, so the fleet's limit grows exactly as fast as a window on a healthy vendor.
//!
//! - **Slow start** until the first congestion: a round of served calls quadruples the limit
//!   (three more per served call: a healthy vendor's batch goes out in few round trips).
//! - **A congestion** (a 429, a hinted 503, our deadline) cuts the limit, once per round: to half
//!   the first time (slow start overshot by up to four times), to 0.7 after (CUBIC's: the limit
//!   was near the capacity already); a scope that counts whole calls rounds to the nearest (a
//!   small limit floored would sit well below the vendor's capacity for many rounds). The limit
//!   it was cut from is the *plateau*.
//! - **After it**, a round grows the limit half the way back to the plateau (BIC's binary
//!   search: a limit cut far below its capacity gets back there in a few rounds), by at least one
//!   call; from one call below the plateau on by an eighth of a call (each 429 there pauses the
//!   provider for every call; probing past it faster cost a third more time against a vendor taking
//!   16 calls at once, `tests/concurrency.rs`). Where no plateau is known (a cut that sets none),
//!   a call a round (additive).

/// Growth per served call in slow start: a round trip quadruples the limit.
pub const SLOW_START_GROWTH: f64 = 3.0;
/// The cut at the congestion that ends slow start: what is left of the limit.
pub const SLOW_START_CUT: f64 = 0.5;
/// The cut at a congestion after it: what is left of the limit.
pub const CUT: f64 = 0.7;
/// From one call below the plateau on, a call of growth takes this many rounds.
pub const PLATEAU_ROUNDS: f64 = 8.0;

/// The limit after one round of served calls at `limit` (a round: `limit` calls served).
/// `plateau`: where it last met congestion, `None` in slow start; infinite where none is known.
pub fn grown(limit: f64, plateau: Option<f64>) -> f64 {
    let limit = limit.max(1.0);
    match plateau {
        None => limit * (1.0 + SLOW_START_GROWTH),
        Some(p) if p.is_infinite() => limit + 1.0,
        Some(p) if limit + 1.0 >= p => limit + 1.0 / PLATEAU_ROUNDS,
        Some(p) => limit + ((p - limit) / 2.0).max(1.0),
    }
}

/// Growth per served call at `limit`: a round's growth spread over its calls.
pub fn growth_per_call(limit: f64, plateau: Option<f64>) -> f64 {
    let limit = limit.max(1.0);
    (grown(limit, plateau) - limit) / limit
}

/// The limit after a congestion at `limit` (`slow_start`: the first one), never below one.
pub fn cut(limit: f64, slow_start: bool) -> f64 {
    (limit * if slow_start { SLOW_START_CUT } else { CUT }).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_quadruples_a_round() {
        assert_eq!(grown(5.0, None), 20.0);
        assert_eq!(growth_per_call(5.0, None), 3.0);
    }

    #[test]
    fn after_a_cut_a_round_goes_half_way_back_then_creeps_at_the_plateau() {
        assert_eq!(grown(10.0, Some(40.0)), 25.0);
        assert_eq!(grown(38.0, Some(40.0)), 39.0);
        assert_eq!(grown(39.5, Some(40.0)), 39.625);
        assert_eq!(grown(39.0, Some(40.0)), 39.125, "within one call: an eighth");
        assert_eq!(grown(45.0, Some(40.0)), 45.125, "past it too");
        assert_eq!(grown(45.0, Some(f64::INFINITY)), 46.0, "none known: a call a round");
    }

    #[test]
    fn a_cut_halves_in_slow_start_and_leaves_0_7_after() {
        assert_eq!(cut(40.0, true), 20.0);
        assert_eq!(cut(40.0, false), 28.0);
        assert_eq!(cut(1.0, false), 1.0);
    }
}
