//! The shared store's failure at the boundary: what an item does when the store does not answer
//! (`storeFailed`), and Get Metrics while it is down (`storeDownMetrics`), with this process's
//! falls back to its memory counted by scope.
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

thread_local! {
    /// This process's falls back to its memory, by scope: counted here, in memory, so Get Metrics
    /// says them while the shared store is down.
    /// A list, not a map: scopes are few, and a map of its own type costs the WASM its own code.
    static FALLBACKS: RefCell<Vec<(String, u64)>> = const { RefCell::new(Vec::new()) };
}

/// This process's falls back to memory in `scope`.
pub(super) fn fallbacks(scope: &str) -> u64 {
    // `try_with` here and below: the engine never runs after its thread ends, and no panic path
    // ships for it.
    FALLBACKS.try_with(|f| f.borrow().iter().find(|(s, _)| s == scope).map_or(0, |(_, n)| *n)).unwrap_or(0)
}

/// The shared store failed (no answer in time, an error, races lost past the bound): carry on in
/// this process's memory (`fail_open`, the node's *On Store Failure*) or defer the item. One
/// decision for rows, tickets and counters; crossed only when the store fails.
/// `scope`: the store scope that failed; a fall-back to memory is counted for it.
#[wasm_bindgen(js_name = storeFailed, unchecked_return_type = "StoreVerdict")]
pub fn store_failed(fail_open: bool, cause: &str, scope: Option<String>) -> Result<JsValue, JsValue> {
    let verdict = crate::rows::store_failure::store_failed(fail_open, cause);
    if let (crate::rows::store_failure::StoreVerdict::FallBack { .. }, Some(scope)) = (&verdict, scope) {
        let _ = FALLBACKS.try_with(|f| {
            let mut f = f.borrow_mut();
            match f.iter_mut().find(|(s, _)| *s == scope) {
                Some((_, n)) => *n += 1,
                None => f.push((scope, 1)),
            }
        });
    }
    // A plain enum of strings: serialising cannot fail (no `to_js` of the parent: no import circle).
    js_sys::JSON::parse(&serde_json::to_string(&verdict).unwrap_or_default())
}

/// Get Metrics while the shared store is down: the store's families alone (it did not answer;
/// this process's fall-backs to memory), nothing of this process's memory as the fleet's.
#[wasm_bindgen(js_name = storeDownMetrics)]
pub fn store_down_metrics(scope: &str) -> String {
    crate::report::metrics::store_families(scope, false, fallbacks(scope))
}
