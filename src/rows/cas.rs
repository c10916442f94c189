//! A compare-and-set write that lost its race, and what the node does next. Every row write of
//! the package (an item's poll and outcome, Check Provider, Report Outcome) goes through one loop
//! that asks this after each lost race, so the bound and what happens at it are one decision.
use crate::rng::Rng;

/// Lost races tolerated in a row before the shared store is given up (bounded: no livelock; a
/// hostile writer that always wins costs about 3 s of jittered waits). 20 was too few beside a
/// CPU hog: 16 least-busy writers on two rows, a loser's waits growing while fresh writers came
/// in without one, and 2 of 800 items ran out of races.
pub const MAX_CAS_RACES: u32 = 32;
/// Before reading again after a lost race, a wait of `U(0, min(cap, base * 2^(n-1)))` ms for
/// the n-th race lost in a row: writers that collided do not collide again in lockstep (16
/// writers on one row lost a bound's worth of races in a row without it, and with a 64 ms cap
/// once, with both cores kept busy beside the whole test command: 256 ms spreads them further).
pub const RACE_BACKOFF_BASE_MS: u64 = 2;
pub const RACE_BACKOFF_CAP_MS: u64 = 256;

/// What the loop does after its `lost_in_row`-th lost race in a row, as `RaceVerdict` in
/// `wasm_types.d.ts` (JSON text; its texts hold no quote).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaceVerdict {
    /// Read the rows again, after `after_ms`, and decide again on them.
    Retry { after_ms: u64 },
    /// Give the shared store up as the node's store setting says (fail open: carry on in this
    /// process's memory; fail closed: defer the item as `store_unavailable`), then go on.
    FallBack,
    /// Already in this process's memory and still losing (other items of this process keep
    /// winning): a record's write is dropped, and the item shows the warning as it is.
    DropWrite,
    /// Likewise, but the decision needs its write (a lease, a probe, a ticket): the item is
    /// deferred as `store_unavailable` instead of acting on rows it does not hold.
    Defer,
}

impl RaceVerdict {
    pub fn json(self) -> String {
        match self {
            RaceVerdict::Retry { after_ms } => format!(r#"{{"kind":"retry","after_ms":{after_ms}}}"#),
            RaceVerdict::FallBack => r#"{"kind":"fall_back","cause":"33 compare-and-set races lost in a row"}"#.into(),
            RaceVerdict::DropWrite => {
                r#"{"kind":"drop_write","warning":"state store: 33 compare-and-set races lost in a row in this process's memory: this outcome was not recorded"}"#.into()
            }
            RaceVerdict::Defer => {
                r#"{"kind":"defer","reason":"store_unavailable","cause":"33 compare-and-set races lost in a row in this process's memory"}"#.into()
            }
        }
    }
}

/// `degraded`: the item already runs on this process's memory. `needs_commit`: the decision
/// cannot be acted on unless its write commits (a poll, a check), unlike a record (an outcome).
pub fn race_lost(lost_in_row: u32, degraded: bool, needs_commit: bool, rng: &mut Rng) -> RaceVerdict {
    match (lost_in_row <= MAX_CAS_RACES, degraded, needs_commit) {
        (true, _, _) => {
            let ceiling = RACE_BACKOFF_BASE_MS << lost_in_row.saturating_sub(1).min(10);
            RaceVerdict::Retry { after_ms: rng.between(0, ceiling.min(RACE_BACKOFF_CAP_MS)) }
        }
        (false, false, _) => RaceVerdict::FallBack,
        (false, true, true) => RaceVerdict::Defer,
        (false, true, false) => RaceVerdict::DropWrite,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lost(n: u32, degraded: bool, needs_commit: bool) -> RaceVerdict {
        race_lost(n, degraded, needs_commit, &mut Rng::seeded(n as u64))
    }

    #[test]
    fn a_lost_race_is_read_again_until_the_bound_after_a_growing_jittered_wait() {
        for n in 1..=MAX_CAS_RACES {
            for v in [lost(n, false, true), lost(n, true, false)] {
                let RaceVerdict::Retry { after_ms } = v else { panic!("{v:?}") };
                let ceiling = (RACE_BACKOFF_BASE_MS << (n - 1).min(10)).min(RACE_BACKOFF_CAP_MS);
                assert!(after_ms <= ceiling, "race {n}: {after_ms} ms over {ceiling}");
            }
        }
        // Jittered: the writers that collided spread out.
        let mut rng = Rng::seeded(3);
        let waits: std::collections::BTreeSet<u64> = (0..200)
            .map(|_| match race_lost(8, false, true, &mut rng) {
                RaceVerdict::Retry { after_ms } => after_ms,
                v => panic!("{v:?}"),
            })
            .collect();
        assert!(waits.len() > 10, "{waits:?}");
    }

    #[test]
    fn past_the_bound_the_shared_store_is_given_up_once_then_the_write_or_the_item() {
        let n = MAX_CAS_RACES + 1;
        assert_eq!(lost(n, false, true), RaceVerdict::FallBack);
        assert_eq!(lost(n, false, false), RaceVerdict::FallBack);
        assert_eq!(lost(n, true, true), RaceVerdict::Defer);
        assert_eq!(lost(n, true, false), RaceVerdict::DropWrite);
    }

    /// Past the bound, in words: the verdicts' texts are static (a formatted one cost the WASM
    /// file a kilobyte), so this holds their number to `MAX_CAS_RACES`.
    const CAUSE: &str = "33 compare-and-set races lost in a row";

    #[test]
    fn each_verdict_is_json_the_node_parses_and_says_the_bound() {
        assert!(CAUSE.starts_with(&format!("{} ", MAX_CAS_RACES + 1)));
        for v in [RaceVerdict::Retry { after_ms: 7 }, RaceVerdict::FallBack, RaceVerdict::DropWrite, RaceVerdict::Defer]
        {
            let parsed: serde_json::Value = serde_json::from_str(&v.json()).expect("json");
            assert!(parsed["kind"].is_string(), "{}", v.json());
            let said = parsed.as_object().unwrap().iter().find(|(k, _)| *k != "kind");
            assert!(
                said.is_none_or(|(_, t)| t.as_u64() == Some(7) || t.as_str().unwrap().contains(CAUSE)),
                "{}",
                v.json()
            );
        }
    }
}
