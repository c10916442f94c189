//! The WASM boundary: narrow and typed. Objects cross as JSON text (serde_json here, the
//! engine's one serialisation format, and V8's `JSON.parse` there); row texts cross as the
//! stores hold them, joined by `ROW_SEPARATOR` into one string a call. An item costs two
//! crossings per attempt: `poll` and `outcome`. The
//! TypeScript shapes are declared in `types.d.ts`. Errors are JS `Error`s with a stable
//! `code` (and `field` for configuration errors).
mod input;
mod store_down;
mod stream_pace;
use crate::choose::chain::Writes;
use crate::config::decode;
use crate::config::Chain;
use crate::error::EngineError;
use crate::facts::answer_text;
use crate::item::session::Session;
use crate::item::ticket;
use crate::limits::fleet_limit;
use crate::limits::seat::Seats;
use crate::report::inspect;
use crate::rng::Rng;
use crate::rows::row_text;
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use wasm_bindgen::prelude::*;

/// The allocator: talc in place of Rust's default dlmalloc, 6.8 KB less WASM (issue 57) at the
/// same speed. It frees and coalesces as dlmalloc does (the engine lives as long as n8n's
/// process); its unsynchronised WASM form needs a single-threaded module (no `atomics`), as here.
#[global_allocator]
static ALLOC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// The answer to `leave`: rows to write, if any.
#[derive(Serialize)]
struct Left {
    #[serde(skip_serializing_if = "Option::is_none")]
    writes: Option<row_text::RowWrites>,
}

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &str = include_str!("types.d.ts");

thread_local! {
    /// One PRNG per process, seeded once from crypto.getRandomValues; items draw their own seed.
    static PROCESS_RNG: RefCell<Option<Rng>> = const { RefCell::new(None) };
}

fn draw_rng() -> Rng {
    PROCESS_RNG
        .try_with(|r| {
            let mut r = r.borrow_mut();
            let rng = r.get_or_insert_with(Rng::from_entropy);
            Rng::seeded(rng.next_u64())
        })
        .unwrap_or_else(|_| Rng::from_entropy())
}

fn js_error(e: EngineError) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    let _ = js_sys::Reflect::set(&err, &"code".into(), &e.code().into());
    if let Some(f) = e.field() {
        let _ = js_sys::Reflect::set(&err, &"field".into(), &f.into());
    }
    err.into()
}

fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(v)
        .map_err(|_| js_error(EngineError::InvalidInput("an answer could not be serialized".into())))?;
    js_sys::JSON::parse(&text)
}

fn done<T: Serialize>(r: Result<T, EngineError>) -> Result<JsValue, JsValue> {
    to_js(&r.map_err(js_error)?)
}

pub(crate) fn ms(v: f64) -> u64 {
    if v.is_finite() && v > 0.0 {
        v as u64
    } else {
        0
    }
}

/// A vendor's finish word in the one vocabulary of Call Chain's LLM presets (`stop`, `length`,
/// `tool_calls`, `content_filter`; another word lower-cased). Crossed once per preset answer.
#[wasm_bindgen(js_name = finishReason)]
pub fn finish_reason(word: &str) -> String {
    crate::verdict::finish_word::shared(word)
}

/// Whether rows read `age_ms` ago may still serve under a read-ahead grant's `limit_ms`.
#[wasm_bindgen(js_name = readServes)]
pub fn read_serves(age_ms: f64, limit_ms: f64) -> bool {
    crate::rows::read_ahead::serves(age_ms, limit_ms)
}

/// Item Concurrency *Auto*: one execution's windows, one per provider of its chain; its items
/// `join` it. `ceiling`: Max Item Concurrency (a provider's Max In Flight caps its own window).
#[wasm_bindgen]
pub struct Pool {
    inner: Rc<RefCell<crate::limits::pool::Pool>>,
}

/// A validated fallback chain. Construction fails with `code: "invalid_config"` and `field`.
#[wasm_bindgen]
pub struct Engine {
    chain: Arc<Chain>,
    /// Shared by this engine's items: the rows decoded last, by their texts.
    memo: Rc<RefCell<row_text::RowMemo>>,
    /// This process's seats at the fleet's limits of the chain's providers, shared by its items
    /// across executions (`fleet_limit`).
    seats: Rc<RefCell<Seats>>,
}

#[wasm_bindgen]
impl Engine {
    #[wasm_bindgen(constructor)]
    pub fn new(#[wasm_bindgen(unchecked_param_type = "ChainConfig")] config: JsValue) -> Result<Engine, JsValue> {
        let text: String = js_sys::JSON::stringify(&config).map(String::from).unwrap_or_default();
        let raw = decode::chain_config(&text).map_err(js_error)?;
        let chain = Arc::new(raw.validate().map_err(js_error)?);
        // Its own draw of entropy: the items' seeded stream (replayed by the vectors) is untouched.
        let holder = ["worker-", &Rng::from_entropy().next_u64().to_string()].concat();
        let seats = Seats::new(holder, chain.providers.len()).keyed(&chain.share_key, chain.share_weight);
        let seats = Rc::new(RefCell::new(seats));
        Ok(Engine { chain, memo: Rc::default(), seats })
    }

    /// Start one item. `holder` names its calls fleet-wide; `keys[i]` is provider i's
    /// Idempotency-Key (used only where the provider's method needs one).
    pub fn item(&self, started_ms: f64, holder: String, keys: &str) -> Result<Item, JsValue> {
        // No keys (no POST/PATCH provider): nothing to split or allocate.
        let keys = match keys {
            "" => Vec::new(),
            _ => keys.split(row_text::SEPARATOR).map(|k| (!k.is_empty()).then(|| k.to_string())).collect(),
        };
        let mut s = Session::new(self.chain.clone(), ms(started_ms), holder, keys, draw_rng());
        if self.chain.fleet_limit {
            s.seat(self.seats.clone());
        }
        Ok(Item { s, memo: self.memo.clone() })
    }

    /// The providers where this process's seat holds no call now (an execution ended): each is
    /// handed to [`Engine::leave`] with its rows, so its share goes back to the fleet at once.
    #[wasm_bindgen(js_name = idleSeats)]
    pub fn idle_seats(&self) -> Vec<u32> {
        let seats = self.seats.borrow();
        (0..self.chain.providers.len())
            .filter(|&i| crate::limits::fleet_limit::rules(&self.chain, i).is_some() && seats.seats[i].in_use == 0)
            .map(|i| i as u32)
            .collect()
    }

    /// Give this process's share of provider `provider`'s limit back, on its row texts read at
    /// `now_ms`: `writes` to make, none when it holds none (or a call of it went out since).
    #[wasm_bindgen(unchecked_return_type = "Left")]
    pub fn leave(&self, now_ms: f64, rows: &str, provider: u32) -> Result<JsValue, JsValue> {
        let p = provider as usize;
        let seats = self.seats.borrow();
        let busy = seats.seats.get(p).is_none_or(|s| s.in_use > 0);
        let view = row_text::view(&row_text::split(rows)).map_err(js_error)?;
        let row = if busy { None } else { fleet_limit::leave(&view.limit, &seats.holder, ms(now_ms)) };
        let writes = row.map(|limit| Writes { provider: p, limit: Some(limit), ..Default::default() });
        to_js(&Left { writes: writes.as_ref().map(row_text::writes) })
    }

    /// Where the chain has Key Quotas, the name its key's rows are kept under
    /// (`key:<Fair Share Key>`): an item's poll reads them after every provider's (a list of
    /// every name would cost the engine 2 KB of glue).
    #[wasm_bindgen(js_name = keyRow)]
    pub fn key_row(&self) -> Option<String> {
        self.chain.quotas.as_ref().map(|q| q.owner.clone())
    }

    /// A pool of windows for one execution's items (Item Concurrency *Auto*).
    pub fn pool(&self, ceiling: u32) -> Pool {
        Pool { inner: Rc::new(RefCell::new(crate::limits::pool::Pool::new(&self.chain, ceiling))) }
    }

    /// Whether a streamed chunk with these facts commits the call to its model (text, a
    /// tool-call delta, reasoning); crossed only until the first one that does.
    pub fn commits(&self, text_chars: u32, tool_call_chunks: u32, reasoning_chars: u32) -> bool {
        crate::facts::stream::commits(&crate::facts::stream::ChunkFacts {
            text_chars,
            tool_call_chunks,
            reasoning_chars,
        })
    }

    /// A broken stream's continuation meets the answer the caller has (`had`): how many of the
    /// continuation's first UTF-16 units (`next`, all of it when `ended`) repeat it and are cut;
    /// `undefined`: read on. Crossed per chunk until it answers, once per continuation.
    pub fn seam(&self, had: &str, next: &str, ended: bool) -> Option<u32> {
        crate::facts::seam::seam(had, next, ended).map(|n| n as u32)
    }

    /// The answer check a streamed answer that never committed fails (`undefined`: it passes and
    /// is handed over); `answer` as an outcome's `answer`. Crossed once, at such a stream's end.
    #[wasm_bindgen(js_name = answerFails)]
    pub fn answer_fails(&self, answer: JsValue) -> Result<Option<String>, JsValue> {
        let facts = input::answer_facts(&answer).map_err(js_error)?;
        Ok(facts.and_then(|f| f.failed(self.chain.rules.answer_checks)).map(|c| c.name().to_string()))
    }

    /// After a lost compare-and-set race (the `lost_in_row`-th): read again, give the shared
    /// store up, drop a record's write, or defer the item. Crossed only when a race is lost.
    #[wasm_bindgen(js_name = raceLost, unchecked_return_type = "RaceVerdict")]
    pub fn race_lost(&self, lost_in_row: u32, degraded: bool, needs_commit: bool) -> Result<JsValue, JsValue> {
        js_sys::JSON::parse(&crate::rows::cas::race_lost(lost_in_row, degraded, needs_commit, &mut draw_rng()).json())
    }

    /// What one provider's row texts say now (Get Provider State): the gauge and live leases.
    /// `provider`: its index in the chain, for what is left of its token limits.
    #[wasm_bindgen(unchecked_return_type = "ProviderState")]
    pub fn inspect(&self, rows: &str, now_ms: f64, provider: Option<u32>) -> Result<JsValue, JsValue> {
        let rules = provider.and_then(|i| self.chain.providers.get(i as usize)).and_then(|p| p.tokens.as_ref());
        done(row_text::view(&row_text::split(rows)).map(|v| inspect::inspect_with(&v, ms(now_ms), rules)))
    }

    /// Get Metrics: the Prometheus text for this chain in `scope`, from the row texts of every
    /// provider (`ROW_KINDS` each) and their counters (a JSON array, one object per provider).
    pub fn metrics(&self, now_ms: f64, scope: &str, rows: &str, counters: &str) -> Result<String, JsValue> {
        let text = crate::report::metrics::render(&self.chain, scope, ms(now_ms), &row_text::split(rows), counters)
            .map_err(js_error)?;
        Ok(text + &crate::report::metrics::store_families(scope, true, store_down::fallbacks(scope)))
    }

    /// Guard, first half: which provider may be called now, without calling. `lease` names the
    /// ticket's leases fleet-wide; `scope` is the store scope the ticket is valid in.
    #[wasm_bindgen(unchecked_return_type = "Checked")]
    pub fn check(&self, now_ms: f64, rows: &str, lease: String, scope: String) -> Result<JsValue, JsValue> {
        done(ticket::check(&self.chain, ms(now_ms), &row_text::split(rows), lease, scope, draw_rng()))
    }

    /// Guard, second half: record the outcome of the call a ticket admitted, on the provider's
    /// row texts; pure, so after a lost race report again on fresh rows.
    #[wasm_bindgen(unchecked_return_type = "Reported")]
    pub fn report(
        &self,
        now_ms: f64,
        #[wasm_bindgen(unchecked_param_type = "Ticket")] ticket: JsValue,
        scope: String,
        #[wasm_bindgen(unchecked_param_type = "Outcome")] outcome: JsValue,
        rows: &str,
    ) -> Result<JsValue, JsValue> {
        let ticket = input::ticket(&ticket).map_err(js_error)?;
        let usage = input::usage(&outcome).map_err(js_error)?;
        let outcome = input::outcome(&outcome).map_err(js_error)?;
        done(ticket::report(&self.chain, &ticket, &scope, ms(now_ms), &outcome, usage, &row_text::split(rows)))
    }
}

/// One item's session: `poll`, call, `outcome`, until it ends.
#[wasm_bindgen]
pub struct Item {
    s: Session,
    memo: Rc<RefCell<row_text::RowMemo>>,
}

#[wasm_bindgen]
impl Item {
    /// The next step from the chain's row texts (`ROW_KINDS` per provider, "" for a fresh row)
    /// read at `now_ms` (the store's clock).
    #[wasm_bindgen(unchecked_return_type = "Polled")]
    pub fn poll(&mut self, now_ms: f64, rows: &str) -> Result<JsValue, JsValue> {
        let views = self.memo.borrow_mut().views(&row_text::split(rows), self.s.row_groups());
        let polled = views.and_then(|v| self.s.poll_views(ms(now_ms), v)).map_err(js_error)?;
        match answer_text::bare_call(&polled) {
            Some(text) => js_sys::JSON::parse(&text),
            None => to_js(&polled),
        }
    }

    /// The shared store failed and this item's rows are this process's memory from now on: its
    /// calls keep to the safe share its worker last knew of each fleet limit. Crossed once.
    #[wasm_bindgen(js_name = onMemory)]
    pub fn on_memory(&mut self) {
        self.s.on_memory();
    }

    /// Item Concurrency *Auto*: this item's calls go through `pool`'s windows. Returns its
    /// number in the pool: a `wake` names the items to poll again by it.
    pub fn join(&mut self, pool: &Pool) -> u32 {
        self.s.join(pool.inner.clone())
    }

    /// The outcome of a call: rows to write, the attempt's log line, the wait before the next
    /// poll, the calls to abort, and the item's end if it ended. `call`: the call's number (its
    /// step's `hedging.call`); left out for the one call the last poll returned.
    #[wasm_bindgen(unchecked_return_type = "Recorded")]
    pub fn outcome(
        &mut self,
        now_ms: f64,
        #[wasm_bindgen(unchecked_param_type = "Outcome")] outcome: JsValue,
        call: Option<u32>,
    ) -> Result<JsValue, JsValue> {
        let end = crate::item::CallEnd {
            usage: input::usage(&outcome).map_err(js_error)?,
            delivered_chars: input::delivered_chars(&outcome),
            longest_gap_ms: input::longest_gap_ms(&outcome),
        };
        let outcome = input::outcome(&outcome).map_err(js_error)?;
        done(self.s.outcome(ms(now_ms), &outcome, call, end))
    }

    /// What this item's request to `provider` is: its input's size (`chars`, `cjk_chars` of
    /// them in CJK scripts; `counted` by the model's tokenizer where it has one) and the most
    /// output it asks for; what its calls reserve of that provider's tokens per minute. Crossed
    /// once per item and token-limited provider.
    pub fn tokens(&mut self, provider: u32, chars: f64, cjk_chars: f64, counted: Option<f64>, max_output: Option<f64>) {
        let whole = |v: f64| ms(v);
        self.s.provider_tokens(
            provider as usize,
            crate::limits::token_limit::TokenFacts {
                counted: counted.map(whole),
                chars: whole(chars),
                cjk_chars: whole(cjk_chars),
                max_output: max_output.map(whole).filter(|&m| m > 0),
            },
        );
    }

    /// A hedging item's calls are all unanswered after its step's `hedge_after_ms`: a hedge
    /// (`call`, with rows to write first) or `await` (maybe with a later `hedge_after_ms`), from
    /// the chain's row texts read at `now_ms`. `again`: the last hedge's write lost its race.
    #[wasm_bindgen(unchecked_return_type = "Polled")]
    pub fn hedge(&mut self, now_ms: f64, rows: &str, again: bool) -> Result<JsValue, JsValue> {
        let views = self.memo.borrow_mut().views(&row_text::split(rows), self.s.row_groups());
        done(views.and_then(|v| self.s.hedge_views(ms(now_ms), v, again)))
    }

    /// A streamed call is about to hand its first committing chunk to the caller, `after_ms`
    /// after it started (its time-to-first-chunk sample). `call`: a hedging item's call number,
    /// left out for the one call out. The calls to abort now: a hedging item's others, or `call`
    /// itself when another committed first (then none of it may reach the caller). Crossed once
    /// per streamed call that commits.
    pub fn commit(&mut self, call: Option<u32>, after_ms: f64) -> Vec<u32> {
        self.s.commit(call, ms(after_ms))
    }

    /// A call named in `abort` (or by `commit`), aborted: its lease freed, its time a latency sample; `end` comes
    /// with the last one.
    #[wasm_bindgen(unchecked_return_type = "Recorded")]
    pub fn abandon(&mut self, now_ms: f64, call: u32) -> Result<JsValue, JsValue> {
        done(self.s.abandon(ms(now_ms), call))
    }

    /// The execution was cancelled: the calls out, each to `abandon` (its holds given back now,
    /// not when its leases end).
    pub fn cancelled(&mut self) -> Vec<u32> {
        self.s.cancelled()
    }

    /// Try `provider` first while it is admissible, before the routing's choice: the model that
    /// served the earlier calls of the same conversation (an agent's tool rounds).
    pub fn prefer(&mut self, provider: u32) -> Result<(), JsValue> {
        self.s.prefer(provider as usize).map_err(js_error)
    }

    /// This item's calls are streamed: each call step carries its `stream` limits. Fails on a
    /// chain not configured with `streams`.
    pub fn stream(&mut self) -> Result<(), JsValue> {
        self.s.stream().map_err(js_error)
    }

    /// After a lost race: the last outcome on the provider's fresh row texts.
    #[wasm_bindgen(unchecked_return_type = "Recorded")]
    pub fn rerecord(&mut self, now_ms: f64, rows: &str) -> Result<JsValue, JsValue> {
        done(self.s.rerecord(ms(now_ms), &row_text::split(rows)))
    }

    /// Hand the item back now (e.g. `store_unavailable` when failing closed).
    #[wasm_bindgen(js_name = deferNow, unchecked_return_type = "End")]
    pub fn defer_now(
        &mut self,
        now_ms: f64,
        #[wasm_bindgen(unchecked_param_type = "Reason")] reason: JsValue,
    ) -> Result<JsValue, JsValue> {
        let reason = input::reason(&reason).map_err(js_error)?;
        to_js(&self.s.defer_now(ms(now_ms), reason))
    }
}

/// Exports for tests only (`--features replay`, built into target/pkg-replay): deterministic
/// jitter for the shared vectors, and single decisions to compare with the Rust engine.
#[cfg(feature = "replay")]
mod replay {
    use super::*;
    use crate::facts::retry_after::hint_with_body;
    use crate::verdict::backoff::{Backoff, Strategy};

    #[wasm_bindgen(js_name = seedRandom)]
    pub fn seed_random(seed: f64) {
        PROCESS_RNG.with(|r| *r.borrow_mut() = Some(Rng::seeded(seed as u64)));
    }

    #[wasm_bindgen(js_name = backoffDelay)]
    pub fn backoff_delay(strategy: &str, base_ms: f64, cap_ms: f64, n: u32, prev_ms: f64) -> Result<f64, JsValue> {
        let strategy = Strategy::parse(strategy).map_err(js_error)?;
        let backoff = Backoff { strategy, base_ms: ms(base_ms).max(1), cap_ms: ms(cap_ms).max(1) };
        Ok(PROCESS_RNG.with(|r| {
            let mut r = r.borrow_mut();
            backoff.delay(n, ms(prev_ms), r.get_or_insert_with(Rng::from_entropy)) as f64
        }))
    }

    #[wasm_bindgen(js_name = serverHint)]
    pub fn server_hint(status: u16, headers: JsValue, now_ms: f64, body: JsValue) -> Result<JsValue, JsValue> {
        let outcome = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&outcome, &"kind".into(), &"status".into());
        let _ = js_sys::Reflect::set(&outcome, &"status".into(), &status.into());
        let _ = js_sys::Reflect::set(&outcome, &"headers".into(), &headers);
        let _ = js_sys::Reflect::set(&outcome, &"body".into(), &body);
        let (headers, body) = match input::outcome(&outcome).map_err(js_error)? {
            crate::verdict::outcome::Outcome::Status { headers, body, .. } => (headers, body),
            _ => unreachable!("built as a status"),
        };
        to_js(&hint_with_body(Some(status), &headers, body.as_deref(), ms(now_ms)))
    }
}
