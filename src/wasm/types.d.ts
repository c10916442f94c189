/** Fixed set of reason codes (README: "Reason codes"). */
export type Reason =
  | "circuit_open" | "cooldown" | "half_open_busy" | "rate_limited" | "retry_after_exceeds_cap"
  | "in_flight_cap" | "budget_exhausted" | "attempts_exhausted" | "failed_over" | "non_retryable"
  | "check_failed" | "content_policy" | "context_too_long" | "store_unavailable" | "stream_broken"
  | "drained" | "retry_budget" | "concurrency_limit" | "token_limited" | "spend_cap";
/** How an item picks among the admissible providers of the best tier. */
export type Routing = "order" | "weighted" | "least_busy" | "latency";
export type Phase = "closed" | "half_open" | "open";
export type Health = "success" | "failure" | "neutral";
export type WaitCause = "backoff" | "retry_after" | "rate_limit_reset" | "rate_gate" | "in_line";

/** `requests` 0 or absent: no limit; `period_ms` 60000 and `burst` 1 when absent. */
export interface RateLimitConfig { requests?: number | null; period_ms?: number | null; burst?: number | null }
/** An override that is 0, null or absent takes the node-level value. */
export interface ProviderConfig {
  name: string; method?: string;
  /** Safe to repeat whatever the method (a model call): retried without an Idempotency-Key. */
  idempotent?: boolean; repairs?: boolean; max_attempts?: number | null; deadline_ms?: number | null;
  threshold?: number | null; open_ms?: number | null; rate_limit?: RateLimitConfig | null;
  max_in_flight?: number | null;
  /** 1 (the default) first; `weight` 1 by default, 0 drains the provider. */
  tier?: number | null; weight?: number | null;
  /** Tokens per minute across the fleet and a spend cap per UTC day or month; prices per
   * million tokens in the user's currency unit. 0 or absent: none (README: "Token limits"). */
  token_limit?: TokenLimitConfig | null;
}
export interface TokenLimitConfig {
  tokens_per_minute?: number; input_tokens_per_minute?: number; output_tokens_per_minute?: number;
  output_reserve?: number; spend_cap?: number; spend_period?: "day" | "month";
  price_input?: number; price_output?: number; price_cached_input?: number; price_reasoning?: number;
  price_cache_write?: number;
}
/** At most `limit` requests, tokens or spend (in the providers' prices' currency) per period. */
export interface KeyQuotaConfig { measure: "requests" | "tokens" | "spend" | string; per: "minute" | "day" | "month" | string; limit: number }
/** Every field but `providers` is optional and takes README's default. */
export interface ChainConfig {
  providers: ProviderConfig[];
  routing?: Routing;
  strategy?: "full_jitter" | "equal_jitter" | "decorrelated" | "none";
  base_ms?: number; cap_ms?: number; max_attempts?: number; deadline_ms?: number; budget_ms?: number;
  retry_after_cap_ms?: number; defer_spread_ms?: number; retry_statuses?: string;
  health_statuses?: string; count_429?: boolean; retry_unsafe_methods?: boolean; count_answer_misses?: boolean;
  /** The answer checks kept (both default true): `empty`, and the finish word and refusal. */
  check_empty?: boolean; check_finish?: boolean;
  next_provider_when_input_too_long?: boolean; next_provider_on_client_error?: boolean;
  streams?: boolean; first_chunk_deadline_ms?: number; stream_idle_ms?: number;
  fail_over_first?: boolean;
  wait_in_line?: boolean;
  /** At a provider's spent fleet limit, wait a short while for a slot instead of moving on. */
  wait_for_slot?: boolean;
  /** low, normal (the default) or high: who takes a spent fleet limit's freed slots first. */
  priority?: string;
  /** A spent fleet limit's split between keys, by weight (1-1000, default 1). */
  fair_share_key?: string; fair_share_weight?: number;
  /** What the Fair Share Key may use of the chain per period, for the fleet (src/limits/key_quota.rs). */
  key_quotas?: KeyQuotaConfig[];
  fleet_limit?: boolean;
  /** The node (`callChain`, `guard`, `chatModel`) and version this chain is for: a switch left
   * unset takes that version's default (src/config/versions.rs); the workflow shares by
   * `workflow:<id>` where the version does and no key is set. */
  node?: string; type_version?: number; workflow_id?: string;
  /** A streamed answer broken after part of it reached the caller is continued by the next model. */
  continue_broken_streams?: boolean;
  /** A committed stream's idle limit follows its own chunks so far (the chat model 1.2). */
  learn_stream_pace?: boolean;
  retry_budget_percent?: number; retry_budget_floor_per_s?: number; retry_budget_window_ms?: number;
  hedge?: "off" | "fixed" | "p95"; hedge_delay_ms?: number; hedge_min_ms?: number; hedge_max_ms?: number;
  max_hedges?: number;
  trip_rule?: "consecutive" | "failure_rate"; failure_rate?: number; min_calls?: number;
  threshold?: number; window_ms?: number; open_ms?: number; open_growth?: number;
  open_max_ms?: number;
  /** A failed probe re-opens the breaker for this long (0: the growing open window). */
  probe_interval_ms?: number; half_open_probes?: number; successes_to_close?: number;
}
export interface ProviderState {
  state: Phase; state_gauge: 0 | 1 | 2; open_until_ms: number | null; trips: number; recent_failures: number;
  last_failure: string | null; probes_in_flight: number; gate_closed_until_ms: number | null; in_flight: number;
  latency_p50_ms: number | null; latency_p95_ms: number | null;
  /** Streamed calls' time to their first committing chunk, kept apart from answers' latency. */
  first_chunk_p50_ms: number | null; first_chunk_p95_ms: number | null;
  /** Item Concurrency Auto's window as the fleet learned it (a row of the last 10 minutes). */
  concurrency: number | null; concurrency_congested_at_ms: number | null; concurrency_in_flight: number;
  /** Workers waiting at the spent fleet limit now, by their calls' priority. */
  waiting: { high: number; normal: number; low: number };
  /** The Fair Share Keys holding the most of that limit now (at most 5): their slots, whether
   * one of their workers waits at the spent limit, their weight. */
  heaviest_keys: { key: string; slots: number; waiting: boolean; weight: number; owed_ms: number }[];
  /** Tokens counted in the last minute; what is left of the tokens per minute and of the spend
   * cap (millionths of the prices' unit) this period, null where none is set (`inspect`'s
   * `provider` given). */
  tokens_last_minute: number; tokens_left_minute: number | null;
  /** What is left of the input and output tokens per minute, where they are limited apart. */
  input_tokens_left_minute: number | null; output_tokens_left_minute: number | null;
  spent_period_micros: number; spend_left_period_micros: number | null; period_ends_ms: number | null;
}
/** One row to write, as text: replace the stored row iff its version is still `expected`. */
/** `key`: the name the row is kept under where it is not its provider's (a Fair Share Key's `quota` row). */
export interface RowWrite { kind: "breaker" | "gate" | "in_flight" | "latency" | "budget" | "limit" | "tokens" | "spend" | "pace" | "quota"; expected: number; version: number; json: string; key?: string }
/** Rows of provider `provider` to write atomically; `event`: the breaker transition they make, as
 * the JSON text a store keeps in the same atomic step (README: "Resilient Provider Trigger");
 * `counts`: what they add to the provider's counters once committed (absent: nothing). */
export interface RowWrites { provider: number; rows: RowWrite[]; event: string | null; counts?: WriteCounts }
/** A committed write's counters (names as in the metrics): the breaker transition it makes. */
export interface WriteCounts { transitions: number }
export interface Transition { from: Phase; to: Phase; at_ms: number }

export type Step =
  | {
      kind: "call"; provider: number; name: string; attempt: number; deadline_ms: number; probe: boolean;
      /** A repair round: ask the provider again with its last answer's validation errors. */
      repair?: boolean;
      /** Continue the answer a broken stream left: the conversation and the partial answer, its
       * chunks on the same stream. */
      continuation?: boolean;
      idempotency_key?: string; stream?: StreamStep; hedging?: CallTag;
    }
  /** No new call: wait for the calls out; ask `hedge` again after `hedge_after_ms` if set. */
  | { kind: "await"; hedge_after_ms?: number }
  | { kind: "sleep"; ms: number; cause: WaitCause }
  /** Item Concurrency Auto: `provider`'s window is full; poll again when a `wake` names it, or
   * after `ms`. */
  | { kind: "queue"; provider: number; ms: number }
  | { kind: "done"; provider: number; name: string; fallback: boolean; checks?: string[] }
  | { kind: "defer"; retry_at_ms: number; reason: Reason }
  | { kind: "fail"; reason: Reason };
/** A streamed attempt's timers: the first committing chunk within `first_chunk_ms`; once
 * committed, no gap over `idle_ms` and no longer than `total_ms` in all. */
export interface StreamStep {
  first_chunk_ms: number; idle_ms: number; total_ms: number; learn_pace: boolean;
  /** The idle limit the provider's last answers give until the stream's own chunks do (absent: none). */
  paced_idle_ms?: number;
}
/** A hedging chain's call: its number (`outcome` and `abandon` name it), whether it is a hedge,
 * and when to ask `hedge` if no call of the item has answered by then (absent: no hedge follows). */
export interface CallTag { call: number; hedge?: boolean; hedge_after_ms?: number }
export type FinalStep = Extract<Step, { kind: "done" | "defer" | "fail" }>;
/** How an item ended: its final step, what it went through, its counters (index = provider). */
export interface End { step: FinalStep; report: Report; counters: Counters[]; windows?: number[] }
/** Row texts cross joined by ROW_SEPARATOR ("\u001e"): `ROW_KINDS.length` per provider of the
 * chain ("" for a row not written yet), and so do an item's Idempotency-Keys ("" for none). */
/** `poll`: write `writes` first (on a lost race read again and poll again), then carry out `step`.
 * Absent fields are none. */
/** The answer to `leave`: rows to write (the process's share given back), if any. */
export interface Left { writes?: RowWrites }
export interface Polled {
  step: Step; writes?: RowWrites; transition?: Transition; end?: End;
  /** The rows this poll decided on, or rows read while its call is out, may serve the next
   * item's decision, if this execution writes nothing meanwhile; absent: none may (this call's
   * record writes rows whatever its outcome: an in-flight lease given back, the probe's verdict). */
  read_ahead?: ReadAhead;
  /** Item Concurrency Auto: the items of the pool (`join`'s numbers) that may poll again. */
  wake?: number[];
}
/** Times after the rows came back: they serve one decision until `serves_ms`; rows older than
 * `read_again_ms` when the call goes out are read again while it is out. */
export interface ReadAhead { serves_ms: number; read_again_ms: number }
/** `outcome` / `abandon` / `rerecord`: write `writes` (on a lost race, `rerecord` with fresh rows),
 * log `attempt`, abort the calls in `abort` (each then `abandon`ed), then finish with `end`, wait
 * for the calls still out, or wait `sleep_ms` and poll. Absent fields are none. */
export interface Recorded {
  writes?: RowWrites; transition?: Transition; attempt?: AttemptLog; sleep_ms: number; abort?: number[]; end?: End;
  /** Item Concurrency Auto: the items of the pool (`join`'s numbers) that may poll again. */
  wake?: number[];
}

/** After a lost compare-and-set race: read again after `after_ms`; give the shared store up (the store's
 * fail-open/closed setting applies); drop a record's write (`warning`, a whole sentence, goes on
 * the item as it is); or defer the item as `store_unavailable`. */
export type RaceVerdict =
  | { kind: "retry"; after_ms: number }
  | { kind: "fall_back"; cause: string }
  | { kind: "drop_write"; warning: string }
  | { kind: "defer"; reason: Reason; cause: string };

/** The shared store failed: carry on in this process's memory (`warning`, a whole sentence, goes
 * on the item as it is), or defer the item with `reason`. */
export type StoreVerdict =
  | { kind: "fall_back"; warning: string }
  | { kind: "defer"; reason: Reason; cause: string };

/** The guard's ticket: plain data that travels in an n8n item. */
export interface Ticket {
  provider: number; name: string; probe: boolean; lease: string; scope: string; issued_ms: number; expires_ms: number;
  /** Its call's estimated cost held against the spend cap (millionths), released by its report. */
  held_micros?: number;
  /** What its call reserved of the tokens per minute (total, input, output) and the estimate
   * (input, output) they came from: its report settles them at the usage the answer reported. */
  reserved_tokens?: number; reserved_input?: number; reserved_output?: number;
  estimate_input?: number; estimate_output?: number;
}
export type Decision =
  /** `ticket_ttl_ms`: how long the store keeps the ticket (the life of its leases). */
  | { kind: "go"; provider: number; name: string; ticket: Ticket; ticket_ttl_ms: number }
  | { kind: "defer"; retry_at_ms: number; reason: Reason }
  | { kind: "fail"; reason: Reason };
/** `counters`: this check's share of each provider's counters (index = provider). */
export interface Checked {
  decision: Decision; writes: RowWrites | null; transition: Transition | null; skipped: Skip[]; counters: Counters[];
}
/** `counters`: the reported call's share of its provider's counters (Call Chain's rule). */
export interface Reported { writes: RowWrites | null; transition: Transition | null; attempt: AttemptLog; counters: Counters; served: boolean }

/** The response headers the engine reads a hint from, by lower-case name (the node's
 * `HINT_HEADERS`): Retry-After, the RateLimit-Reset family and the LLM vendors' own. */
export interface HintHeaders {
  "retry-after"?: string; "ratelimit-reset"?: string; "x-ratelimit-reset"?: string;
  "ratelimit-remaining"?: string; "x-ratelimit-remaining"?: string; "retry-after-ms"?: string;
  "x-ratelimit-reset-requests"?: string; "x-ratelimit-remaining-requests"?: string;
  "x-ratelimit-reset-tokens"?: string; "x-ratelimit-remaining-tokens"?: string;
  "anthropic-ratelimit-requests-reset"?: string; "anthropic-ratelimit-requests-remaining"?: string;
  "anthropic-ratelimit-tokens-reset"?: string; "anthropic-ratelimit-tokens-remaining"?: string;
  "anthropic-ratelimit-input-tokens-reset"?: string; "anthropic-ratelimit-input-tokens-remaining"?: string;
  "anthropic-ratelimit-output-tokens-reset"?: string; "anthropic-ratelimit-output-tokens-remaining"?: string;
}
export type Outcome =
  | {
      kind: "status"; status: number; headers?: HintHeaders; failed_check?: string | null; answer?: AnswerFacts;
      /** The body's first 4 KB as text; read by the engine only for the statuses a rule needs. */
      body?: string | null;
      usage?: UsageFacts;
    }
  | { kind: "error"; code: string }
  /** A streamed answer that failed after its first committing chunk reached the caller: by its
   * code, or by the facts of the error that broke it (`OutcomeFacts` but for `kind`). */
  | { kind: "broken"; code: string; delivered_chars?: number }
  | (Omit<OutcomeFacts, "kind"> & { kind: "broken"; code?: undefined; delivered_chars?: number })
  /** What a call left behind, unread: the engine decides which fact decides (README: "Outcomes"). */
  | OutcomeFacts;
export interface OutcomeFacts {
  kind: "facts";
  /** It ended with an answer (a resolved call, an item on the main output), not an error. */
  answered?: boolean;
  /** The status as received: a number, or every status field's text down the cause chain
   * (n8n's `httpCode` "503", "5XX"; the SDK's `status`) joined by ROW_SEPARATOR; none if none. */
  status?: number | string | null;
  /** Down the cause chain, outermost first, as they came, joined by ROW_SEPARATOR: error codes,
   * messages, class names. */
  codes?: string; messages?: string; names?: string;
  headers?: HintHeaders; failed_check?: string | null; answer?: AnswerFacts;
  /** Read by the engine only for the statuses a rule needs. */
  body?: string | null;
  usage?: UsageFacts;
  /** A streamed answer's longest gap between chunks, as its `StreamPace.learnedGap()` gave it. */
  longest_gap_ms?: number;
}
/** The tokens an answer reported, as the vendor counted them: `output` with its reasoning tokens
 * (Gemini's thoughts added), `cached_input` (read from the cache) and `cache_write` (written
 * to it: Anthropic's cache_creation_input_tokens) parts of `input`. */
export interface UsageFacts {
  input: number; output: number; cached_input?: number; reasoning?: number; cache_write?: number;
}
/** What the node saw of a success answer, as the vendor and the validator said it; which check it
 * fails and what that counts against is the engine's. */
export interface AnswerFacts {
  /** Neither text nor a tool call. */
  empty?: boolean;
  /** The vendor's finish word as it came (finish_reason, stop_reason, finishReason, …). */
  finish?: string | null;
  /** The vendor marked the answer a refusal (OpenAI's message.refusal). */
  refusal?: boolean;
  schema_checked?: boolean;
  schema_errors?: { path: string; message: string }[];
}
export interface AttemptLog {
  provider: number; name: string; attempt: number; outcome: string; probe: boolean;
  wait_ms: number; wait_cause: WaitCause | null; retry_after: boolean; health: Health;
  /** A hedge (absent: not one); its `outcome` is "abandoned" when another call's answer won. */
  hedge?: boolean;
  /** The check that decided the outcome: required_path, empty, content_policy, cut, schema. */
  check?: string;
  /** The schema validator's errors, when the answer missed the schema. */
  errors?: { path: string; message: string }[];
  /** What the call used where its provider has token limits or prices: as reported, or its
   * estimate (`estimated`) when it ended without usage; `cost_micros` in millionths of the unit. */
  tokens?: { input: number; output: number; estimated?: boolean; cost_micros?: number };
  /** A continuation of a broken stream: the characters of the answer the caller had then. */
  continued_after_chars?: number;
  /** An input too long for the model: its limit and the request's size in tokens, as the vendor
   * said them (absent where its message does not say both). */
  context?: { limit: number; requested: number };
}
export interface Counters {
  calls: number; failures: number; rejections: number; retries: number; rate_limited_429: number; give_ups: number;
  deferrals: number; retry_budget_exhausted: number; hedges: number; hedge_wins: number;
  /** Answers that failed each check (present when not 0). */
  [check: `check_failures:${string}`]: number;
  /** Token limits (present when not 0): tokens reported, settled at estimates, cost, turned away. */
  "tokens:input"?: number; "tokens:output"?: number; "tokens:estimated"?: number; spend_micros?: number;
  token_limited?: number;
}
/** `until_ms`: only for a reason that waits for something (a retryable one). */
export interface Skip { provider: number; reason: Reason; until_ms?: number }
/** `route`: the item's visit order (provider indexes) and the routing that chose it; absent
 * for a configured order in one tier. */
export interface Report { attempts: AttemptLog[]; skipped: Skip[]; slept_ms: number; route?: { routing: Routing; order: number[] } }
