/* tslint:disable */
/* eslint-disable */
/** Fixed set of reason codes (README: "Reason codes"). */
export type Reason =
| "circuit_open" | "cooldown" | "half_open_busy" | "rate_limited" | "retry_after_exceeds_cap"
| "in_flight_cap" | "budget_exhausted" | "attempts_exhausted" | "non_retryable" | "check_failed"
| "store_unavailable";
export type Phase = "closed" | "half_open" | "open";
export type Health = "success" | "failure" | "neutral";
export type WaitCause = "backoff" | "retry_after" | "rate_limit_reset" | "rate_gate";

export interface RateLimitConfig { requests: number; period_ms: number; burst?: number }
export interface ProviderConfig {
    name: string; method?: string; max_attempts?: number | null; deadline_ms?: number | null;
    threshold?: number | null; open_ms?: number | null; rate_limit?: RateLimitConfig | null;
    max_in_flight?: number | null;
}
/** Every field but `providers` is optional and takes README's default. */
export interface ChainConfig {
    providers: ProviderConfig[];
    strategy?: "full_jitter" | "equal_jitter" | "decorrelated" | "none";
    base_ms?: number; cap_ms?: number; max_attempts?: number; deadline_ms?: number; budget_ms?: number;
    retry_after_cap_ms?: number; defer_spread_ms?: number; retry_statuses?: string;
    health_statuses?: string; count_429?: boolean; retry_unsafe_methods?: boolean;
    trip_rule?: "consecutive" | "failure_rate"; failure_rate?: number; min_calls?: number;
    threshold?: number; window_ms?: number; open_ms?: number; open_growth?: number;
    open_max_ms?: number; half_open_probes?: number; successes_to_close?: number;
}
export interface BreakerPolicy {
    trip: { rule: "consecutive" } | { rule: "failure_rate"; rate: number; min_calls: number };
    threshold: number; window_ms: number; open_ms: number; open_growth: number; open_max_ms: number;
    half_open_probes: number; successes_to_close: number; probe_lease_ms: number; probe_answer_ms: number;
}
export interface ResolvedProvider {
    name: string; unsafe_method: boolean; max_attempts: number; deadline_ms: number;
    breaker: BreakerPolicy; rate_limit: { requests: number; period_ms: number; burst: number } | null;
    max_in_flight: number | null;
}
export interface ResolvedChain {
    providers: ResolvedProvider[];
    backoff: { strategy: string; base_ms: number; cap_ms: number };
    budget_ms: number; retry_after_cap_ms: number; defer_spread_ms: number;
    rules: { retry_statuses: string; health_statuses: string; count_429: boolean; retry_unsafe_methods: boolean };
}

export interface Lease { holder: string; until_ms: number }
export interface BreakerRow {
    phase: Phase; failures: number[]; buckets: { start_ms: number; calls: number; failures: number }[];
    open_until_ms: number; streak: number; trips: number; probes: Lease[]; successes: number;
    last_failure: string | null; version: number;
}
export interface GateRow { tat_us: number; closed_until_ms: number; version: number }
export interface InFlightRow { leases: Lease[]; version: number }
/** A provider's rows as read from the store; missing rows may be left out (fresh). */
export interface ProviderView { breaker?: BreakerRow; gate?: GateRow; in_flight?: InFlightRow }
export interface ProviderState {
    state: Phase; state_gauge: 0 | 1 | 2; open_until_ms: number | null; trips: number; recent_failures: number;
    last_failure: string | null; probes_in_flight: number; gate_closed_until_ms: number | null; in_flight: number;
}
/** New rows to write atomically; each has `version` = stored version + 1. */
export interface Writes {
    provider: number; breaker: BreakerRow | null; gate: GateRow | null; in_flight: InFlightRow | null;
}
export interface Transition { from: Phase; to: Phase; at_ms: number }

export type Step =
| { kind: "call"; provider: number; name: string; attempt: number; deadline_ms: number; probe: boolean; idempotency_key: string | null }
| { kind: "sleep"; ms: number; cause: WaitCause }
| { kind: "done"; provider: number; name: string; fallback: boolean }
| { kind: "defer"; retry_at_ms: number; reason: Reason }
| { kind: "fail"; reason: Reason };
export interface Poll { step: Step; writes: Writes | null; transition: Transition | null }

export interface HintHeaders {
    "retry-after"?: string; "ratelimit-reset"?: string; "x-ratelimit-reset"?: string;
    "ratelimit-remaining"?: string; "x-ratelimit-remaining"?: string;
}
export interface Hint { delay_ms: number; source: "retry_after" | "rate_limit_reset" }
export type Outcome =
| { kind: "status"; status: number; headers?: HintHeaders; failed_check?: string | null }
| { kind: "error"; code: string };
export interface Effect {
    provider: number; health: Health; holder: string; label: string;
    gate_close_until_ms: number | null; release_in_flight: boolean;
}
export interface Recorded { writes: Writes | null; transition: Transition | null }

export type Admission =
| { kind: "call" } | { kind: "probe"; lease_until_ms: number }
| { kind: "skip"; until_ms: number; reason: Reason };
export interface Decided<T> { decision: T; row: BreakerRow | null; transition: Transition | null }
export type Take =
| { kind: "now"; row: GateRow | null }
| { kind: "reserved"; at_ms: number; row: GateRow }
| { kind: "wait"; until_ms: number; reason: Reason };

export interface AttemptLog {
    provider: number; name: string; attempt: number; outcome: string; probe: boolean;
    wait_ms: number; wait_cause: WaitCause | null; retry_after: boolean; health: Health;
}
export interface Counters {
    calls: number; failures: number; rejections: number; retries: number; rate_limited_429: number; give_ups: number;
}
export interface Skip { provider: number; reason: Reason; until_ms: number }
export interface Report { attempts: AttemptLog[]; skipped: Skip[]; slept_ms: number }



/**
 * A validated fallback chain. Construction fails with `code: "invalid_config"` and `field`.
 */
export class Engine {
    free(): void;
    [Symbol.dispose](): void;
    /**
     * Breaker admission for provider `provider` alone (state inspection and tests).
     */
    admit(provider: number, row: BreakerRow, now_ms: number, holder: string): Decided<Admission>;
    /**
     * Take a slot of provider `provider`'s rate gate.
     */
    gateTake(provider: number, row: GateRow, now_ms: number, max_wait_ms: number): Take;
    /**
     * What a provider's rows say now (Get Provider State): the gauge and live leases.
     */
    inspect(view: ProviderView, now_ms: number): ProviderState;
    /**
     * Start one item. `holder` names its calls fleet-wide; `keys[i]` is provider i's Idempotency-Key.
     */
    item(started_ms: number, holder: string, keys: (string | null)[]): Item;
    constructor(config: ChainConfig);
    /**
     * Apply an outcome's effect to the provider's rows; re-run on fresh rows after a lost race.
     */
    record(view: ProviderView, effect: Effect, now_ms: number): Recorded;
    /**
     * The validated chain with every default filled in.
     */
    resolved(): ResolvedChain;
}

/**
 * One item's step machine.
 */
export class Item {
    private constructor();
    free(): void;
    [Symbol.dispose](): void;
    /**
     * This item's contribution to each provider's counters (index = provider).
     */
    counters(): Counters[];
    /**
     * Defer the item now (e.g. `store_unavailable` when failing closed); gives the final step.
     */
    deferNow(now_ms: number, reason: Reason): Step;
    /**
     * The final step if the item already ended (e.g. right after a successful outcome), else null.
     */
    finished(): Step | null;
    /**
     * The latest attempt alone, for the per-attempt log line (the whole report is built once, at the end).
     */
    lastAttempt(): AttemptLog | null;
    /**
     * The outcome of the call the last poll returned; gives the effect to record.
     */
    onOutcome(now_ms: number, outcome: Outcome, credential_refreshed: boolean): Effect;
    /**
     * The next step given the chain's rows read at `now_ms` (the store's clock).
     */
    poll(now_ms: number, views: ProviderView[]): Poll;
    report(): Report;
}

/**
 * The delay before retry `n` (0-based) under a strategy; `prev_ms` for decorrelated.
 */
export function backoffDelay(strategy: string, base_ms: number, cap_ms: number, n: number, prev_ms: number): number;

/**
 * Close a gate row until `until_ms` (null when it already was).
 */
export function gateClose(row: GateRow, until_ms: number): GateRow | null;

/**
 * Make the process's jitter deterministic (tests and the simulator only).
 */
export function seedRandom(seed: number): void;

/**
 * The server's hint (Retry-After, RateLimit-Reset) for a response, or null.
 */
export function serverHint(status: number, headers: HintHeaders, now_ms: number): Hint | null;
