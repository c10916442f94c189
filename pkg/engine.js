/* @ts-self-types="./engine.d.ts" */

/**
 * A validated fallback chain. Construction fails with `code: "invalid_config"` and `field`.
 */
class Engine {
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        EngineFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_engine_free(ptr, 0);
    }
    /**
     * The answer check a streamed answer that never committed fails (`undefined`: it passes and
     * is handed over); `answer` as an outcome's `answer`. Crossed once, at such a stream's end.
     * @param {any} answer
     * @returns {string | undefined}
     */
    answerFails(answer) {
        const ret = wasm.engine_answerFails(this.__wbg_ptr, answer);
        if (ret[3]) {
            throw takeFromExternrefTable0(ret[2]);
        }
        let v1;
        if (ret[0] !== 0) {
            v1 = getStringFromWasm0(ret[0], ret[1]);
            wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        }
        return v1;
    }
    /**
     * Guard, first half: which provider may be called now, without calling. `lease` names the
     * ticket's leases fleet-wide; `scope` is the store scope the ticket is valid in.
     * @param {number} now_ms
     * @param {string} rows
     * @param {string} lease
     * @param {string} scope
     * @returns {Checked}
     */
    check(now_ms, rows, lease, scope) {
        const val4 = +now_ms;
        let ptr0, len0, ptr1, len1, ptr2, len2;
        try {
            ptr0 = passStringToWasm0(rows, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(lease, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
            ptr2 = passStringToWasm0(scope, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len2 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr2) { wasm.__wbindgen_free(ptr2, len2 * 1, 1); }
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.engine_check(this.__wbg_ptr, val4, ptr0, len0, ptr1, len1, ptr2, len2);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * Whether a streamed chunk with these facts commits the call to its model (text, a
     * tool-call delta, reasoning); crossed only until the first one that does.
     * @param {number} text_chars
     * @param {number} tool_call_chunks
     * @param {number} reasoning_chars
     * @returns {boolean}
     */
    commits(text_chars, tool_call_chunks, reasoning_chars) {
        const ret = wasm.engine_commits(this.__wbg_ptr, text_chars, tool_call_chunks, reasoning_chars);
        return ret !== 0;
    }
    /**
     * The providers where this process's seat holds no call now (an execution ended): each is
     * handed to [`Engine::leave`] with its rows, so its share goes back to the fleet at once.
     * @returns {Uint32Array}
     */
    idleSeats() {
        const ret = wasm.engine_idleSeats(this.__wbg_ptr);
        var v1 = getArrayU32FromWasm0(ret[0], ret[1]).slice();
        wasm.__wbindgen_free(ret[0], ret[1] * 4, 4);
        return v1;
    }
    /**
     * What one provider's row texts say now (Get Provider State): the gauge and live leases.
     * `provider`: its index in the chain, for what is left of its token limits.
     * @param {string} rows
     * @param {number} now_ms
     * @param {number | null} [provider]
     * @returns {ProviderState}
     */
    inspect(rows, now_ms, provider) {
        const val2 = +now_ms;
        const val3 = +(isLikeNone(provider) ? Number.MAX_SAFE_INTEGER : (provider) >>> 0);
        const ptr0 = passStringToWasm0(rows, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.engine_inspect(this.__wbg_ptr, ptr0, len0, val2, val3);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * Start one item. `holder` names its calls fleet-wide; `keys[i]` is provider i's
     * Idempotency-Key (used only where the provider's method needs one).
     * @param {number} started_ms
     * @param {string} holder
     * @param {string} keys
     * @returns {Item}
     */
    item(started_ms, holder, keys) {
        const val3 = +started_ms;
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passStringToWasm0(holder, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(keys, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.engine_item(this.__wbg_ptr, val3, ptr0, len0, ptr1, len1);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return Item.__wrap(ret[0]);
    }
    /**
     * Where the chain has Key Quotas, the name its key's rows are kept under
     * (`key:<Fair Share Key>`): an item's poll reads them after every provider's (a list of
     * every name would cost the engine 2 KB of glue).
     * @returns {string | undefined}
     */
    keyRow() {
        const ret = wasm.engine_keyRow(this.__wbg_ptr);
        let v1;
        if (ret[0] !== 0) {
            v1 = getStringFromWasm0(ret[0], ret[1]);
            wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        }
        return v1;
    }
    /**
     * Give this process's share of provider `provider`'s limit back, on its row texts read at
     * `now_ms`: `writes` to make, none when it holds none (or a call of it went out since).
     * @param {number} now_ms
     * @param {string} rows
     * @param {number} provider
     * @returns {Left}
     */
    leave(now_ms, rows, provider) {
        const val2 = +now_ms;
        const val3 = +provider;
        const ptr0 = passStringToWasm0(rows, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.engine_leave(this.__wbg_ptr, val2, ptr0, len0, val3);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * Get Metrics: the Prometheus text for this chain in `scope`, from the row texts of every
     * provider (`ROW_KINDS` each) and their counters (a JSON array, one object per provider).
     * @param {number} now_ms
     * @param {string} scope
     * @param {string} rows
     * @param {string} counters
     * @returns {string}
     */
    metrics(now_ms, scope, rows, counters) {
        let deferred6_0;
        let deferred6_1;
        try {
            const val4 = +now_ms;
            let ptr0, len0, ptr1, len1, ptr2, len2;
            try {
                ptr0 = passStringToWasm0(scope, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
                len0 = WASM_VECTOR_LEN;
                ptr1 = passStringToWasm0(rows, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
                len1 = WASM_VECTOR_LEN;
                ptr2 = passStringToWasm0(counters, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
                len2 = WASM_VECTOR_LEN;
            } catch (e) {
                if (ptr2) { wasm.__wbindgen_free(ptr2, len2 * 1, 1); }
                if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
                if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
                throw e;
            }
            const ret = wasm.engine_metrics(this.__wbg_ptr, val4, ptr0, len0, ptr1, len1, ptr2, len2);
            var ptr5 = ret[0];
            var len5 = ret[1];
            if (ret[3]) {
                ptr5 = 0; len5 = 0;
                throw takeFromExternrefTable0(ret[2]);
            }
            deferred6_0 = ptr5;
            deferred6_1 = len5;
            return getStringFromWasm0(ptr5, len5);
        } finally {
            wasm.__wbindgen_free(deferred6_0, deferred6_1, 1);
        }
    }
    /**
     * @param {ChainConfig} config
     */
    constructor(config) {
        const ret = wasm.engine_new(config);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        this.__wbg_ptr = ret[0];
        EngineFinalization.register(this, this.__wbg_ptr, this);
        return this;
    }
    /**
     * A pool of windows for one execution's items (Item Concurrency *Auto*).
     * @param {number} ceiling
     * @returns {Pool}
     */
    pool(ceiling) {
        const ret = wasm.engine_pool(this.__wbg_ptr, ceiling);
        return Pool.__wrap(ret);
    }
    /**
     * After a lost compare-and-set race (the `lost_in_row`-th): read again, give the shared
     * store up, drop a record's write, or defer the item. Crossed only when a race is lost.
     * @param {number} lost_in_row
     * @param {boolean} degraded
     * @param {boolean} needs_commit
     * @returns {RaceVerdict}
     */
    raceLost(lost_in_row, degraded, needs_commit) {
        const ret = wasm.engine_raceLost(this.__wbg_ptr, lost_in_row, degraded, needs_commit);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * Guard, second half: record the outcome of the call a ticket admitted, on the provider's
     * row texts; pure, so after a lost race report again on fresh rows.
     * @param {number} now_ms
     * @param {Ticket} ticket
     * @param {string} scope
     * @param {Outcome} outcome
     * @param {string} rows
     * @returns {Reported}
     */
    report(now_ms, ticket, scope, outcome, rows) {
        const val3 = +now_ms;
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passStringToWasm0(scope, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(rows, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.engine_report(this.__wbg_ptr, val3, ticket, ptr0, len0, outcome, ptr1, len1);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * A broken stream's continuation meets the answer the caller has (`had`): how many of the
     * continuation's first UTF-16 units (`next`, all of it when `ended`) repeat it and are cut;
     * `undefined`: read on. Crossed per chunk until it answers, once per continuation.
     * @param {string} had
     * @param {string} next
     * @param {boolean} ended
     * @returns {number | undefined}
     */
    seam(had, next, ended) {
        const val3 = +ended;
        let ptr0, len0, ptr1, len1;
        try {
            ptr0 = passStringToWasm0(had, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len0 = WASM_VECTOR_LEN;
            ptr1 = passStringToWasm0(next, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            len1 = WASM_VECTOR_LEN;
        } catch (e) {
            if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
            if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
            throw e;
        }
        const ret = wasm.engine_seam(this.__wbg_ptr, ptr0, len0, ptr1, len1, val3);
        return ret === Number.MAX_SAFE_INTEGER ? undefined : ret;
    }
}
if (Symbol.dispose) Engine.prototype[Symbol.dispose] = Engine.prototype.free;
exports.Engine = Engine;

/**
 * One item's session: `poll`, call, `outcome`, until it ends.
 */
class Item {
    static __wrap(ptr) {
        const obj = Object.create(Item.prototype);
        obj.__wbg_ptr = ptr;
        ItemFinalization.register(obj, obj.__wbg_ptr, obj);
        return obj;
    }
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        ItemFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_item_free(ptr, 0);
    }
    /**
     * A call named in `abort` (or by `commit`), aborted: its lease freed, its time a latency sample; `end` comes
     * with the last one.
     * @param {number} now_ms
     * @param {number} call
     * @returns {Recorded}
     */
    abandon(now_ms, call) {
        const ret = wasm.item_abandon(this.__wbg_ptr, now_ms, call);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * The execution was cancelled: the calls out, each to `abandon` (its holds given back now,
     * not when its leases end).
     * @returns {Uint32Array}
     */
    cancelled() {
        const ret = wasm.item_cancelled(this.__wbg_ptr);
        var v1 = getArrayU32FromWasm0(ret[0], ret[1]).slice();
        wasm.__wbindgen_free(ret[0], ret[1] * 4, 4);
        return v1;
    }
    /**
     * A streamed call is about to hand its first committing chunk to the caller, `after_ms`
     * after it started (its time-to-first-chunk sample). `call`: a hedging item's call number,
     * left out for the one call out. The calls to abort now: a hedging item's others, or `call`
     * itself when another committed first (then none of it may reach the caller). Crossed once
     * per streamed call that commits.
     * @param {number | null | undefined} call
     * @param {number} after_ms
     * @returns {Uint32Array}
     */
    commit(call, after_ms) {
        const ret = wasm.item_commit(this.__wbg_ptr, isLikeNone(call) ? Number.MAX_SAFE_INTEGER : (call) >>> 0, after_ms);
        var v1 = getArrayU32FromWasm0(ret[0], ret[1]).slice();
        wasm.__wbindgen_free(ret[0], ret[1] * 4, 4);
        return v1;
    }
    /**
     * Hand the item back now (e.g. `store_unavailable` when failing closed).
     * @param {number} now_ms
     * @param {Reason} reason
     * @returns {End}
     */
    deferNow(now_ms, reason) {
        const ret = wasm.item_deferNow(this.__wbg_ptr, now_ms, reason);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * A hedging item's calls are all unanswered after its step's `hedge_after_ms`: a hedge
     * (`call`, with rows to write first) or `await` (maybe with a later `hedge_after_ms`), from
     * the chain's row texts read at `now_ms`. `again`: the last hedge's write lost its race.
     * @param {number} now_ms
     * @param {string} rows
     * @param {boolean} again
     * @returns {Polled}
     */
    hedge(now_ms, rows, again) {
        const val2 = +now_ms;
        const val3 = +again;
        const ptr0 = passStringToWasm0(rows, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.item_hedge(this.__wbg_ptr, val2, ptr0, len0, val3);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * Item Concurrency *Auto*: this item's calls go through `pool`'s windows. Returns its
     * number in the pool: a `wake` names the items to poll again by it.
     * @param {Pool} pool
     * @returns {number}
     */
    join(pool) {
        _assertClass(pool, Pool);
        const ret = wasm.item_join(this.__wbg_ptr, pool.__wbg_ptr);
        return ret >>> 0;
    }
    /**
     * The shared store failed and this item's rows are this process's memory from now on: its
     * calls keep to the safe share its worker last knew of each fleet limit. Crossed once.
     */
    onMemory() {
        wasm.item_onMemory(this.__wbg_ptr);
    }
    /**
     * The outcome of a call: rows to write, the attempt's log line, the wait before the next
     * poll, the calls to abort, and the item's end if it ended. `call`: the call's number (its
     * step's `hedging.call`); left out for the one call the last poll returned.
     * @param {number} now_ms
     * @param {Outcome} outcome
     * @param {number | null} [call]
     * @returns {Recorded}
     */
    outcome(now_ms, outcome, call) {
        const ret = wasm.item_outcome(this.__wbg_ptr, now_ms, outcome, isLikeNone(call) ? Number.MAX_SAFE_INTEGER : (call) >>> 0);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * The next step from the chain's row texts (`ROW_KINDS` per provider, "" for a fresh row)
     * read at `now_ms` (the store's clock).
     * @param {number} now_ms
     * @param {string} rows
     * @returns {Polled}
     */
    poll(now_ms, rows) {
        const val2 = +now_ms;
        const ptr0 = passStringToWasm0(rows, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.item_poll(this.__wbg_ptr, val2, ptr0, len0);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * Try `provider` first while it is admissible, before the routing's choice: the model that
     * served the earlier calls of the same conversation (an agent's tool rounds).
     * @param {number} provider
     */
    prefer(provider) {
        const ret = wasm.item_prefer(this.__wbg_ptr, provider);
        if (ret[1]) {
            throw takeFromExternrefTable0(ret[0]);
        }
    }
    /**
     * After a lost race: the last outcome on the provider's fresh row texts.
     * @param {number} now_ms
     * @param {string} rows
     * @returns {Recorded}
     */
    rerecord(now_ms, rows) {
        const val2 = +now_ms;
        const ptr0 = passStringToWasm0(rows, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.item_rerecord(this.__wbg_ptr, val2, ptr0, len0);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return takeFromExternrefTable0(ret[0]);
    }
    /**
     * This item's calls are streamed: each call step carries its `stream` limits. Fails on a
     * chain not configured with `streams`.
     */
    stream() {
        const ret = wasm.item_stream(this.__wbg_ptr);
        if (ret[1]) {
            throw takeFromExternrefTable0(ret[0]);
        }
    }
    /**
     * What this item's request to `provider` is: its input's size (`chars`, `cjk_chars` of
     * them in CJK scripts; `counted` by the model's tokenizer where it has one) and the most
     * output it asks for; what its calls reserve of that provider's tokens per minute. Crossed
     * once per item and token-limited provider.
     * @param {number} provider
     * @param {number} chars
     * @param {number} cjk_chars
     * @param {number | null} [counted]
     * @param {number | null} [max_output]
     */
    tokens(provider, chars, cjk_chars, counted, max_output) {
        wasm.item_tokens(this.__wbg_ptr, provider, chars, cjk_chars, !isLikeNone(counted), isLikeNone(counted) ? 0 : counted, !isLikeNone(max_output), isLikeNone(max_output) ? 0 : max_output);
    }
}
if (Symbol.dispose) Item.prototype[Symbol.dispose] = Item.prototype.free;
exports.Item = Item;

/**
 * Item Concurrency *Auto*: one execution's windows, one per provider of its chain; its items
 * `join` it. `ceiling`: Max Item Concurrency (a provider's Max In Flight caps its own window).
 */
class Pool {
    static __wrap(ptr) {
        const obj = Object.create(Pool.prototype);
        obj.__wbg_ptr = ptr;
        PoolFinalization.register(obj, obj.__wbg_ptr, obj);
        return obj;
    }
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        PoolFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_pool_free(ptr, 0);
    }
}
if (Symbol.dispose) Pool.prototype[Symbol.dispose] = Pool.prototype.free;
exports.Pool = Pool;

/**
 * One committed stream's idle limit, learned from its own chunks (`facts::stream::Pace`): made
 * from the attempt's stream step, told each chunk's time, it answers the limit from then.
 */
class StreamPace {
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        StreamPaceFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_streampace_free(ptr, 0);
    }
    /**
     * A chunk arrived at `at_ms` (the node's clock, ms): the idle limit from now.
     * @param {number} at_ms
     * @returns {number}
     */
    chunk(at_ms) {
        const ret = wasm.streampace_chunk(this.__wbg_ptr, at_ms);
        return ret;
    }
    /**
     * The stream's longest gap between chunks once it had enough to show its pace, for its
     * outcome's `longest_gap_ms` (what the answer teaches its provider); else undefined.
     * @returns {number | undefined}
     */
    learnedGap() {
        const ret = wasm.streampace_learnedGap(this.__wbg_ptr);
        return ret[0] === 0 ? undefined : ret[1];
    }
    /**
     * @param {StreamStep} step
     */
    constructor(step) {
        const ret = wasm.streampace_new(step);
        this.__wbg_ptr = ret;
        StreamPaceFinalization.register(this, this.__wbg_ptr, this);
        return this;
    }
}
if (Symbol.dispose) StreamPace.prototype[Symbol.dispose] = StreamPace.prototype.free;
exports.StreamPace = StreamPace;

/**
 * A vendor's finish word in the one vocabulary of Call Chain's LLM presets (`stop`, `length`,
 * `tool_calls`, `content_filter`; another word lower-cased). Crossed once per preset answer.
 * @param {string} word
 * @returns {string}
 */
function finishReason(word) {
    let deferred2_0;
    let deferred2_1;
    try {
        const ptr0 = passStringToWasm0(word, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.finishReason(ptr0, len0);
        deferred2_0 = ret[0];
        deferred2_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred2_0, deferred2_1, 1);
    }
}
exports.finishReason = finishReason;

/**
 * Whether rows read `age_ms` ago may still serve under a read-ahead grant's `limit_ms`.
 * @param {number} age_ms
 * @param {number} limit_ms
 * @returns {boolean}
 */
function readServes(age_ms, limit_ms) {
    const ret = wasm.readServes(age_ms, limit_ms);
    return ret !== 0;
}
exports.readServes = readServes;

/**
 * Get Metrics while the shared store is down: the store's families alone (it did not answer;
 * this process's fall-backs to memory), nothing of this process's memory as the fleet's.
 * @param {string} scope
 * @returns {string}
 */
function storeDownMetrics(scope) {
    let deferred2_0;
    let deferred2_1;
    try {
        const ptr0 = passStringToWasm0(scope, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.storeDownMetrics(ptr0, len0);
        deferred2_0 = ret[0];
        deferred2_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred2_0, deferred2_1, 1);
    }
}
exports.storeDownMetrics = storeDownMetrics;

/**
 * The shared store failed (no answer in time, an error, races lost past the bound): carry on in
 * this process's memory (`fail_open`, the node's *On Store Failure*) or defer the item. One
 * decision for rows, tickets and counters; crossed only when the store fails.
 * `scope`: the store scope that failed; a fall-back to memory is counted for it.
 * @param {boolean} fail_open
 * @param {string} cause
 * @param {string | null} [scope]
 * @returns {StoreVerdict}
 */
function storeFailed(fail_open, cause, scope) {
    const val3 = +fail_open;
    let ptr0, len0, ptr1, len1;
    try {
        ptr0 = passStringToWasm0(cause, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        len0 = WASM_VECTOR_LEN;
        ptr1 = isLikeNone(scope) ? 0 : passStringToWasm0(scope, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        len1 = WASM_VECTOR_LEN;
    } catch (e) {
        if (ptr1) { wasm.__wbindgen_free(ptr1, len1 * 1, 1); }
        if (ptr0) { wasm.__wbindgen_free(ptr0, len0 * 1, 1); }
        throw e;
    }
    const ret = wasm.storeFailed(val3, ptr0, len0, ptr1, len1);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return takeFromExternrefTable0(ret[0]);
}
exports.storeFailed = storeFailed;
function __wbg_get_imports() {
    const import0 = {
        __proto__: null,
        __wbg___wbindgen_boolean_get_4f1baf9a00be3c74: function(arg0) {
            const v = arg0;
            const ret = typeof(v) === 'boolean' ? v : undefined;
            return isLikeNone(ret) ? 0xFFFFFF : ret ? 1 : 0;
        },
        __wbg___wbindgen_is_null_c22311b1cc228e3a: function(arg0) {
            const ret = arg0 === null;
            return ret;
        },
        __wbg___wbindgen_is_object_8b968c3ab8e96595: function(arg0) {
            const val = arg0;
            const ret = typeof(val) === 'object' && val !== null;
            return ret;
        },
        __wbg___wbindgen_is_undefined_be5b34249ff1fc15: function(arg0) {
            const ret = arg0 === undefined;
            return ret;
        },
        __wbg___wbindgen_number_get_934b640d0889af78: function(arg0, arg1) {
            const obj = arg1;
            const ret = typeof(obj) === 'number' ? obj : undefined;
            getDataViewMemory0().setFloat64((arg0 >>> 0) + 8 * 1, isLikeNone(ret) ? 0 : ret, true);
            getDataViewMemory0().setInt32((arg0 >>> 0) + 4 * 0, !isLikeNone(ret), true);
        },
        __wbg___wbindgen_string_get_7ce8eee7fd327545: function(arg0, arg1) {
            const obj = arg1;
            const ret = typeof(obj) === 'string' ? obj : undefined;
            var ptr1 = isLikeNone(ret) ? 0 : passStringToWasm0(ret, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
            var len1 = WASM_VECTOR_LEN;
            getDataViewMemory0().setInt32((arg0 >>> 0) + 4 * 1, len1, true);
            getDataViewMemory0().setInt32((arg0 >>> 0) + 4 * 0, ptr1, true);
        },
        __wbg___wbindgen_throw_4c88d8bf264fd984: function(arg0, arg1) {
            throw new Error(getStringFromWasm0(arg0, arg1));
        },
        __wbg_getRandomValues_5d8c030b527203a6: function() { return handleError(function (arg0, arg1) {
            globalThis.crypto.getRandomValues(getArrayU8FromWasm0(arg0, arg1));
        }, arguments); },
        __wbg_get_2080c49015e35254: function() { return handleError(function (arg0, arg1) {
            const ret = Reflect.get(arg0, arg1);
            return ret;
        }, arguments); },
        __wbg_get_unchecked_e6325ad374eff861: function(arg0, arg1) {
            const ret = arg0[arg1 >>> 0];
            return ret;
        },
        __wbg_isArray_bcf1376d0d732d08: function(arg0) {
            const ret = Array.isArray(arg0);
            return ret;
        },
        __wbg_length_b03a0fabb109b1e9: function(arg0) {
            const ret = arg0.length;
            return ret;
        },
        __wbg_new_787b9fb330d55d78: function(arg0, arg1) {
            const ret = new Error(getStringFromWasm0(arg0, arg1));
            return ret;
        },
        __wbg_parse_c3f72b5a24f83c01: function() { return handleError(function (arg0, arg1) {
            const ret = JSON.parse(getStringFromWasm0(arg0, arg1));
            return ret;
        }, arguments); },
        __wbg_set_2793479888329cb6: function() { return handleError(function (arg0, arg1, arg2) {
            const ret = Reflect.set(arg0, arg1, arg2);
            return ret;
        }, arguments); },
        __wbg_stringify_0a0fbf2ef722380a: function() { return handleError(function (arg0) {
            const ret = JSON.stringify(arg0);
            return ret;
        }, arguments); },
        __wbindgen_generic_0000000000000001: function(arg0, arg1) {
            // Cast intrinsic for `Ref(String) -> Externref`.
            const ret = getStringFromWasm0(arg0, arg1);
            return ret;
        },
        __wbindgen_init_externref_table: function() {
            const table = wasm.__wbindgen_externrefs;
            table.set(0, undefined);
            table.set(1024, undefined);
            table.set(1025, null);
            table.set(1026, true);
            table.set(1027, false);
        },
    };
    return {
        __proto__: null,
        "./engine_bg.js": import0,
    };
}

const EngineFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_engine_free(ptr, 1));
const ItemFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_item_free(ptr, 1));
const PoolFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_pool_free(ptr, 1));
const StreamPaceFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_streampace_free(ptr, 1));

function addToExternrefTable0(obj) {
    const idx = wasm.__externref_table_alloc();
    wasm.__wbindgen_externrefs.set(idx, obj);
    return idx;
}

function _assertClass(instance, klass) {
    if (!(instance instanceof klass)) {
        throw new Error(`expected instance of ${klass.name}`);
    }
}

function getArrayU32FromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return getUint32ArrayMemory0().subarray(ptr / 4, ptr / 4 + len);
}

function getArrayU8FromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return getUint8ArrayMemory0().subarray(ptr / 1, ptr / 1 + len);
}

let cachedDataViewMemory0 = null;
function getDataViewMemory0() {
    if (cachedDataViewMemory0 === null || cachedDataViewMemory0.buffer.detached === true || (cachedDataViewMemory0.buffer.detached === undefined && cachedDataViewMemory0.buffer !== wasm.memory.buffer)) {
        cachedDataViewMemory0 = new DataView(wasm.memory.buffer);
    }
    return cachedDataViewMemory0;
}

function getStringFromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return decodeText(getUint8ArrayMemory0().subarray(ptr, ptr + len));
}

let cachedUint32ArrayMemory0 = null;
function getUint32ArrayMemory0() {
    if (cachedUint32ArrayMemory0 === null || cachedUint32ArrayMemory0.byteLength === 0) {
        cachedUint32ArrayMemory0 = new Uint32Array(wasm.memory.buffer);
    }
    return cachedUint32ArrayMemory0;
}

let cachedUint8ArrayMemory0 = null;
function getUint8ArrayMemory0() {
    if (cachedUint8ArrayMemory0 === null || cachedUint8ArrayMemory0.byteLength === 0) {
        cachedUint8ArrayMemory0 = new Uint8Array(wasm.memory.buffer);
    }
    return cachedUint8ArrayMemory0;
}

function handleError(f, args) {
    try {
        return f.apply(this, args);
    } catch (e) {
        const idx = addToExternrefTable0(e);
        wasm.__wbindgen_exn_store(idx);
    }
}

function isLikeNone(x) {
    return x === undefined || x === null;
}

function passStringToWasm0(arg, malloc, realloc) {
    if (realloc === undefined) {
        const buf = cachedTextEncoder.encode(arg);
        const ptr = malloc(buf.length, 1) >>> 0;
        getUint8ArrayMemory0().subarray(ptr, ptr + buf.length).set(buf);
        WASM_VECTOR_LEN = buf.length;
        return ptr;
    }

    let len = arg.length;
    let ptr = malloc(len, 1) >>> 0;

    const mem = getUint8ArrayMemory0();

    let offset = 0;

    for (; offset < len; offset++) {
        const code = arg.charCodeAt(offset);
        if (code > 0x7F) break;
        mem[ptr + offset] = code;
    }
    if (offset !== len) {
        if (offset !== 0) {
            arg = arg.slice(offset);
        }
        ptr = realloc(ptr, len, len = offset + arg.length * 3, 1) >>> 0;
        const view = getUint8ArrayMemory0().subarray(ptr + offset, ptr + len);
        const ret = cachedTextEncoder.encodeInto(arg, view);

        offset += ret.written;
        ptr = realloc(ptr, len, offset, 1) >>> 0;
    }

    WASM_VECTOR_LEN = offset;
    return ptr;
}

function takeFromExternrefTable0(idx) {
    const value = wasm.__wbindgen_externrefs.get(idx);
    wasm.__externref_table_dealloc(idx);
    return value;
}

let cachedTextDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
cachedTextDecoder.decode();
function decodeText(bytes) {
    return cachedTextDecoder.decode(bytes);
}

const cachedTextEncoder = new TextEncoder();

if (!('encodeInto' in cachedTextEncoder)) {
    cachedTextEncoder.encodeInto = function (arg, view) {
        const buf = cachedTextEncoder.encode(arg);
        view.set(buf);
        return {
            read: arg.length,
            written: buf.length
        };
    };
}

let WASM_VECTOR_LEN = 0;

const wasmPath = `${__dirname}/engine_bg.wasm`;
const wasmBytes = require('fs').readFileSync(wasmPath);
const wasmModule = new WebAssembly.Module(wasmBytes);
let wasmInstance = new WebAssembly.Instance(wasmModule, __wbg_get_imports());
let wasm = wasmInstance.exports;
wasm.__wbindgen_start();
