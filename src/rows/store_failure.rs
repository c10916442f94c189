//! The shared store failed: no answer within its deadline, an error, or compare-and-set races
//! lost past the bound (`cas`). What the node does next is one decision for rows, tickets and the
//! counters' write alike: carry on in this process's memory, marking the item (fail open), or
//! defer the item as `store_unavailable` (fail closed), as the node's *On Store Failure* says.
use crate::verdict::reason::Reason;
use serde::Serialize;

/// As `StoreVerdict` in `wasm_types.d.ts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StoreVerdict {
    /// Carry on in this process's memory; `warning` goes on the item as it is.
    FallBack { warning: String },
    /// Defer the item: nothing it would decide on is the fleet's.
    Defer { reason: Reason, cause: String },
}

/// `fail_open`: the node's *On Store Failure* setting; `cause`: what the store did, as the node saw it.
pub fn store_failed(fail_open: bool, cause: &str) -> StoreVerdict {
    if fail_open {
        StoreVerdict::FallBack {
            warning: format!("state store unavailable ({cause}): this item used this process's memory"),
        }
    } else {
        StoreVerdict::Defer { reason: Reason::StoreUnavailable, cause: cause.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_open_carries_on_in_memory_and_says_so_fail_closed_defers_the_item() {
        let open = store_failed(true, "no answer within 2000 ms");
        assert_eq!(
            serde_json::to_string(&open).unwrap(),
            r#"{"kind":"fall_back","warning":"state store unavailable (no answer within 2000 ms): this item used this process's memory"}"#
        );
        let closed = store_failed(false, r#"connect "ECONNREFUSED""#);
        assert_eq!(
            closed,
            StoreVerdict::Defer { reason: Reason::StoreUnavailable, cause: r#"connect "ECONNREFUSED""#.into() }
        );
        let v: serde_json::Value = serde_json::from_str(&serde_json::to_string(&closed).unwrap()).unwrap();
        assert_eq!(v["reason"], "store_unavailable");
        assert_eq!(v["cause"], r#"connect "ECONNREFUSED""#);
    }
}
