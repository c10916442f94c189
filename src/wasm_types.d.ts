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
