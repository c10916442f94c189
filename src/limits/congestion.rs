//! One congestion rule, used at three scopes, each keeping its own state: an execution's window
//! (`concurrency`), the fleet's learned limit and a worker's share of it (`fleet_limit`). Slow
//! start grows by three per served call (quadrupling per round trip) until the first congestion;
//! that cut is to half (slow start overshot by up to four times), later ones to 0.7 (CUBIC's: the
//! limit was near the capacity already), once per round; after it, additive growth, an eighth as
//! fast just below where the limit last met congestion (a plateau, as CUBIC's).

/// Growth per served call in slow start: a round trip quadruples the limit.
pub const SLOW_START_GROWTH: u32 = 3;
/// The cut at the congestion that ends slow start, in tenths of the limit.
pub const SLOW_START_CUT_TENTHS: u32 = 5;
/// The cut at a congestion after it, in tenths of the limit.
pub const CUT_TENTHS: u32 = 7;
/// Just below the plateau, growth takes this many times as many rounds.
pub const PLATEAU_ROUNDS: u32 = 8;

/// The tenths a congestion leaves of the limit.
pub fn cut_tenths(slow_start: bool) -> u32 {
    if slow_start {
        SLOW_START_CUT_TENTHS
    } else {
        CUT_TENTHS
    }
}
