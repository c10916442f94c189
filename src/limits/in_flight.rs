//! An optional cap on calls in flight to a provider across all workers, held as leases so a
//! crashed worker's slot frees itself when its lease ends.
use crate::limits::lease::{earliest_end, live, Lease};
use crate::verdict::reason::Reason;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct InFlightRow {
    pub leases: Vec<Lease>,
    pub version: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Acquire {
    Granted { row: InFlightRow },
    Full { until_ms: u64, reason: Reason },
}

pub fn acquire(row: &InFlightRow, cap: u32, holder: &str, now_ms: u64, lease_ms: u64) -> Acquire {
    let mut leases = live(&row.leases, now_ms);
    if leases.len() as u32 >= cap {
        return Acquire::Full { until_ms: earliest_end(&leases), reason: Reason::InFlightCap };
    }
    leases.push(Lease { holder: holder.to_string(), until_ms: now_ms.saturating_add(lease_ms) });
    Acquire::Granted { row: InFlightRow { leases, version: row.version.wrapping_add(1) } }
}

/// Give the slot back; `None` when this holder had none.
pub fn release(row: &InFlightRow, holder: &str) -> Option<InFlightRow> {
    let leases: Vec<Lease> = row.leases.iter().filter(|l| l.holder != holder).cloned().collect();
    (leases.len() != row.leases.len()).then(|| InFlightRow { leases, version: row.version.wrapping_add(1) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_holds_and_a_dead_holders_slot_frees_itself() {
        let mut row = InFlightRow::default();
        for h in ["a", "b"] {
            match acquire(&row, 2, h, 0, 1000) {
                Acquire::Granted { row: r } => row = r,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(acquire(&row, 2, "c", 10, 1000), Acquire::Full { until_ms: 1000, reason: Reason::InFlightCap });
        assert!(matches!(acquire(&row, 2, "c", 1000, 1000), Acquire::Granted { .. }), "leases of a crashed worker end");
        let freed = release(&row, "a").unwrap();
        assert_eq!(freed.leases.len(), 1);
        assert_eq!(release(&freed, "a"), None);
    }
}
