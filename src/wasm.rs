//! The WASM boundary: thin and typed. Plain objects in and out through serde-wasm-bindgen; the
//! TypeScript shapes are declared below so the node gets a real `.d.ts`. Errors are JS `Error`s
//! with a stable `code` (and `field` for configuration errors).
use crate::backoff::{Backoff, Strategy};
use crate::breaker::{self, BreakerRow};
use crate::chain::ProviderView;
use crate::config::{Chain, ChainConfig};
use crate::error::EngineError;
use crate::inspect;
use crate::outcome::Outcome;
use crate::rate_gate::{self, GateRow};
use crate::record::record;
use crate::retry_after::{hint, HintHeaders};
use crate::rng::Rng;
use crate::step::{Effect, ItemMachine};
use serde::{de::DeserializeOwned, Serialize};
use std::cell::RefCell;
use std::sync::Arc;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &str = include_str!("wasm_types.d.ts");

thread_local! {
    /// One PRNG per process, seeded once from crypto.getRandomValues; items draw their own seed.
    static PROCESS_RNG: RefCell<Option<Rng>> = const { RefCell::new(None) };
}

fn item_rng() -> Rng {
    PROCESS_RNG.with(|r| {
        let mut r = r.borrow_mut();
        let rng = r.get_or_insert_with(Rng::from_entropy);
        Rng::seeded(rng.next_u64())
    })
}

/// Make the process's jitter deterministic (tests and the simulator only).
#[wasm_bindgen(js_name = seedRandom)]
pub fn seed_random(seed: f64) {
    PROCESS_RNG.with(|r| *r.borrow_mut() = Some(Rng::seeded(seed as u64)));
}

fn js_error(e: EngineError) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    let _ = js_sys::Reflect::set(&err, &"code".into(), &e.code().into());
    if let Some(f) = e.field() {
        let _ = js_sys::Reflect::set(&err, &"field".into(), &f.into());
    }
    err.into()
}

fn from_js<T: DeserializeOwned>(what: &str, v: JsValue) -> Result<T, JsValue> {
    serde_wasm_bindgen::from_value(v).map_err(|e| js_error(EngineError::InvalidInput(format!("{what}: {e}"))))
}

fn from_js_state<T: DeserializeOwned>(what: &str, v: JsValue) -> Result<T, JsValue> {
    serde_wasm_bindgen::from_value(v).map_err(|e| js_error(EngineError::CorruptState(format!("{what}: {e}"))))
}

fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| js_error(EngineError::InvalidInput(format!("output: {e}"))))
}

fn ms(v: f64) -> u64 {
    if v.is_finite() && v > 0.0 {
        v as u64
    } else {
        0
    }
}

/// A validated fallback chain. Construction fails with `code: "invalid_config"` and `field`.
#[wasm_bindgen]
pub struct Engine {
    chain: Arc<Chain>,
}

#[wasm_bindgen]
impl Engine {
    #[wasm_bindgen(constructor)]
    pub fn new(#[wasm_bindgen(unchecked_param_type = "ChainConfig")] config: JsValue) -> Result<Engine, JsValue> {
        let raw: ChainConfig = serde_wasm_bindgen::from_value(config)
            .map_err(|e| js_error(EngineError::config("config", e.to_string())))?;
        Ok(Engine { chain: Arc::new(raw.validate().map_err(js_error)?) })
    }

    /// The validated chain with every default filled in.
    #[wasm_bindgen(unchecked_return_type = "ResolvedChain")]
    pub fn resolved(&self) -> Result<JsValue, JsValue> {
        to_js(&*self.chain)
    }

    /// Start one item. `holder` names its calls fleet-wide; `keys[i]` is provider i's Idempotency-Key.
    pub fn item(
        &self,
        started_ms: f64,
        holder: String,
        #[wasm_bindgen(unchecked_param_type = "(string | null)[]")] keys: JsValue,
    ) -> Result<Item, JsValue> {
        let keys: Vec<Option<String>> =
            if keys.is_undefined() || keys.is_null() { Vec::new() } else { from_js("keys", keys)? };
        Ok(Item { m: ItemMachine::new(self.chain.clone(), ms(started_ms), holder, keys, item_rng()) })
    }

    /// Apply an outcome's effect to the provider's rows; re-run on fresh rows after a lost race.
    #[wasm_bindgen(unchecked_return_type = "Recorded")]
    pub fn record(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProviderView")] view: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Effect")] effect: JsValue,
        now_ms: f64,
    ) -> Result<JsValue, JsValue> {
        let view: ProviderView = from_js_state("view", view)?;
        let effect: Effect = from_js("effect", effect)?;
        if effect.provider >= self.chain.providers.len() {
            return Err(js_error(EngineError::InvalidInput(format!(
                "effect.provider {} out of range",
                effect.provider
            ))));
        }
        to_js(&record(&self.chain, &view, &effect, ms(now_ms)))
    }

    /// Breaker admission for provider `provider` alone (state inspection and tests).
    #[wasm_bindgen(unchecked_return_type = "Decided<Admission>")]
    pub fn admit(
        &self,
        provider: usize,
        #[wasm_bindgen(unchecked_param_type = "BreakerRow")] row: JsValue,
        now_ms: f64,
        holder: &str,
    ) -> Result<JsValue, JsValue> {
        let p = self
            .chain
            .providers
            .get(provider)
            .ok_or_else(|| js_error(EngineError::InvalidInput(format!("provider {provider} out of range"))))?;
        let row: BreakerRow = from_js_state("breaker row", row)?;
        to_js(&breaker::admit(&row, &p.breaker, ms(now_ms), holder))
    }

    /// What a provider's rows say now (Get Provider State): the gauge and live leases.
    #[wasm_bindgen(unchecked_return_type = "ProviderState")]
    pub fn inspect(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProviderView")] view: JsValue,
        now_ms: f64,
    ) -> Result<JsValue, JsValue> {
        let view: ProviderView = from_js_state("provider view", view)?;
        to_js(&inspect::inspect(&view, ms(now_ms)))
    }

    /// Take a slot of provider `provider`'s rate gate.
    #[wasm_bindgen(js_name = gateTake, unchecked_return_type = "Take")]
    pub fn gate_take(
        &self,
        provider: usize,
        #[wasm_bindgen(unchecked_param_type = "GateRow")] row: JsValue,
        now_ms: f64,
        max_wait_ms: f64,
    ) -> Result<JsValue, JsValue> {
        let p = self
            .chain
            .providers
            .get(provider)
            .ok_or_else(|| js_error(EngineError::InvalidInput(format!("provider {provider} out of range"))))?;
        let row: GateRow = from_js_state("gate row", row)?;
        to_js(&rate_gate::take(&row, p.rate_limit.as_ref(), ms(now_ms), ms(max_wait_ms)))
    }
}

/// One item's step machine.
#[wasm_bindgen]
pub struct Item {
    m: ItemMachine,
}

#[wasm_bindgen]
impl Item {
    /// The next step given the chain's rows read at `now_ms` (the store's clock).
    #[wasm_bindgen(unchecked_return_type = "Poll")]
    pub fn poll(
        &mut self,
        now_ms: f64,
        #[wasm_bindgen(unchecked_param_type = "ProviderView[]")] views: JsValue,
    ) -> Result<JsValue, JsValue> {
        let views: Vec<ProviderView> = from_js_state("views", views)?;
        to_js(&self.m.poll(ms(now_ms), &views).map_err(js_error)?)
    }

    /// The outcome of the call the last poll returned; gives the effect to record.
    #[wasm_bindgen(js_name = onOutcome, unchecked_return_type = "Effect")]
    pub fn on_outcome(
        &mut self,
        now_ms: f64,
        #[wasm_bindgen(unchecked_param_type = "Outcome")] outcome: JsValue,
        credential_refreshed: bool,
    ) -> Result<JsValue, JsValue> {
        let outcome: Outcome = from_js("outcome", outcome)?;
        to_js(&self.m.on_outcome(ms(now_ms), &outcome, credential_refreshed).map_err(js_error)?)
    }

    /// The final step if the item already ended (e.g. right after a successful outcome), else null.
    #[wasm_bindgen(unchecked_return_type = "Step | null")]
    pub fn finished(&self) -> Result<JsValue, JsValue> {
        to_js(&self.m.finished())
    }

    /// Defer the item now (e.g. `store_unavailable` when failing closed); gives the final step.
    #[wasm_bindgen(js_name = deferNow, unchecked_return_type = "Step")]
    pub fn defer_now(
        &mut self,
        now_ms: f64,
        #[wasm_bindgen(unchecked_param_type = "Reason")] reason: JsValue,
    ) -> Result<JsValue, JsValue> {
        let reason: crate::reason::Reason = from_js("reason", reason)?;
        to_js(&self.m.defer_now(ms(now_ms), reason))
    }

    /// This item's contribution to each provider's counters (index = provider).
    #[wasm_bindgen(unchecked_return_type = "Counters[]")]
    pub fn counters(&self) -> Result<JsValue, JsValue> {
        to_js(&self.m.counters())
    }

    #[wasm_bindgen(unchecked_return_type = "Report")]
    pub fn report(&self) -> Result<JsValue, JsValue> {
        to_js(self.m.report())
    }

    /// The latest attempt alone, for the per-attempt log line (the whole report is built once, at the end).
    #[wasm_bindgen(js_name = lastAttempt, unchecked_return_type = "AttemptLog | null")]
    pub fn last_attempt(&self) -> Result<JsValue, JsValue> {
        to_js(&self.m.report().attempts.last())
    }
}

/// The delay before retry `n` (0-based) under a strategy; `prev_ms` for decorrelated.
#[wasm_bindgen(js_name = backoffDelay)]
pub fn backoff_delay(strategy: &str, base_ms: f64, cap_ms: f64, n: u32, prev_ms: f64) -> Result<f64, JsValue> {
    let backoff = Backoff {
        strategy: Strategy::parse(strategy).map_err(js_error)?,
        base_ms: ms(base_ms).max(1),
        cap_ms: ms(cap_ms).max(1),
    };
    if backoff.cap_ms < backoff.base_ms {
        return Err(js_error(EngineError::config("cap_ms", "cap is below base")));
    }
    Ok(PROCESS_RNG.with(|r| {
        let mut r = r.borrow_mut();
        let rng = r.get_or_insert_with(Rng::from_entropy);
        backoff.delay(n, ms(prev_ms), rng) as f64
    }))
}

/// The server's hint (Retry-After, RateLimit-Reset) for a response, or null.
#[wasm_bindgen(js_name = serverHint, unchecked_return_type = "Hint | null")]
pub fn server_hint(
    status: u16,
    #[wasm_bindgen(unchecked_param_type = "HintHeaders")] headers: JsValue,
    now_ms: f64,
) -> Result<JsValue, JsValue> {
    let headers: HintHeaders = from_js("headers", headers)?;
    to_js(&hint(Some(status), &headers, ms(now_ms)))
}

/// Close a gate row until `until_ms` (null when it already was).
#[wasm_bindgen(js_name = gateClose, unchecked_return_type = "GateRow | null")]
pub fn gate_close(
    #[wasm_bindgen(unchecked_param_type = "GateRow")] row: JsValue,
    until_ms: f64,
) -> Result<JsValue, JsValue> {
    let row: GateRow = from_js_state("gate row", row)?;
    to_js(&rate_gate::close(&row, ms(until_ms)))
}
