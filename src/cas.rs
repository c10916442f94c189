//! A compare-and-set write that lost its race, and what the node does next. Every row write of
//! the package (an item's poll and outcome, Check Provider, Report Outcome) goes through one loop
//! that asks this after each lost race, so the bound and what happens at it are one decision.
/// Lost races tolerated in a row before the shared store is given up (bounded: no livelock).
pub const MAX_CAS_RACES: u32 = 20;

/// What the loop does after its `lost_in_row`-th lost race in a row, as `RaceVerdict` in
/// `wasm_types.d.ts` (JSON text; its texts hold no quote).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaceVerdict {
    /// Read the rows again and decide again on them.
    Retry,
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
    pub fn json(self) -> &'static str {
        match self {
            RaceVerdict::Retry => r#"{"kind":"retry"}"#,
            RaceVerdict::FallBack => r#"{"kind":"fall_back","cause":"21 compare-and-set races lost in a row"}"#,
            RaceVerdict::DropWrite => {
                r#"{"kind":"drop_write","warning":"state store: 21 compare-and-set races lost in a row in this process's memory: this outcome was not recorded"}"#
            }
            RaceVerdict::Defer => {
                r#"{"kind":"defer","cause":"21 compare-and-set races lost in a row in this process's memory"}"#
            }
        }
    }
}

/// `degraded`: the item already runs on this process's memory. `needs_commit`: the decision
/// cannot be acted on unless its write commits (a poll, a check), unlike a record (an outcome).
pub fn race_lost(lost_in_row: u32, degraded: bool, needs_commit: bool) -> RaceVerdict {
    match (lost_in_row <= MAX_CAS_RACES, degraded, needs_commit) {
        (true, _, _) => RaceVerdict::Retry,
        (false, false, _) => RaceVerdict::FallBack,
        (false, true, true) => RaceVerdict::Defer,
        (false, true, false) => RaceVerdict::DropWrite,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_race_is_read_again_until_the_bound() {
        for n in 1..=MAX_CAS_RACES {
            assert_eq!(race_lost(n, false, true), RaceVerdict::Retry);
            assert_eq!(race_lost(n, true, false), RaceVerdict::Retry);
        }
    }

    #[test]
    fn past_the_bound_the_shared_store_is_given_up_once_then_the_write_or_the_item() {
        let n = MAX_CAS_RACES + 1;
        assert_eq!(race_lost(n, false, true), RaceVerdict::FallBack);
        assert_eq!(race_lost(n, false, false), RaceVerdict::FallBack);
        assert_eq!(race_lost(n, true, true), RaceVerdict::Defer);
        assert_eq!(race_lost(n, true, false), RaceVerdict::DropWrite);
    }

    /// Past the bound, in words: the verdicts' texts are static (a formatted one cost the WASM
    /// file a kilobyte), so this holds their number to `MAX_CAS_RACES`.
    const CAUSE: &str = "21 compare-and-set races lost in a row";

    #[test]
    fn each_verdict_is_json_the_node_parses_and_says_the_bound() {
        assert!(CAUSE.starts_with(&format!("{} ", MAX_CAS_RACES + 1)));
        for v in [RaceVerdict::Retry, RaceVerdict::FallBack, RaceVerdict::DropWrite, RaceVerdict::Defer] {
            let parsed: serde_json::Value = serde_json::from_str(v.json()).expect("json");
            assert!(parsed["kind"].is_string(), "{}", v.json());
            let said = parsed.as_object().unwrap().iter().find(|(k, _)| *k != "kind");
            assert!(said.is_none_or(|(_, t)| t.as_str().unwrap().contains(CAUSE)), "{}", v.json());
        }
    }
}
