// The node's Retry Policy and Breaker options → the engine's chain settings, as a table: one row
// per setting, its panel collection, its parameter name and how its value is read. A value the
// user left empty is not handed over: the engine's default applies (one defaults table, the
// engine's).
import type { IDataObject } from 'n8n-workflow';
import type { ChainConfig } from '../engine';
import type { FieldReader } from './fields';

type Kind = 'whole' | 'number' | 'switch' | 'text';
type Row = [
	setting: keyof ChainConfig,
	collection: 'retryPolicy' | 'breaker',
	param: string,
	kind: Kind,
];

const ROWS: Row[] = [
	['routing', 'retryPolicy', 'routing', 'text'],
	['strategy', 'retryPolicy', 'strategy', 'text'],
	['base_ms', 'retryPolicy', 'baseMs', 'whole'],
	['cap_ms', 'retryPolicy', 'capMs', 'whole'],
	['max_attempts', 'retryPolicy', 'maxAttempts', 'whole'],
	['deadline_ms', 'retryPolicy', 'deadlineMs', 'whole'],
	['budget_ms', 'retryPolicy', 'budgetMs', 'whole'],
	['retry_after_cap_ms', 'retryPolicy', 'retryAfterCapMs', 'whole'],
	['defer_spread_ms', 'retryPolicy', 'deferSpreadMs', 'whole'],
	['retry_statuses', 'retryPolicy', 'retryStatuses', 'text'],
	['health_statuses', 'retryPolicy', 'healthStatuses', 'text'],
	['count_429', 'retryPolicy', 'count429', 'switch'],
	['retry_unsafe_methods', 'retryPolicy', 'retryUnsafeMethods', 'switch'],
	['next_provider_when_input_too_long', 'retryPolicy', 'nextProviderWhenInputTooLong', 'switch'],
	['first_chunk_deadline_ms', 'retryPolicy', 'firstChunkDeadlineMs', 'whole'],
	['stream_idle_ms', 'retryPolicy', 'streamIdleMs', 'whole'],
	['fail_over_first', 'retryPolicy', 'failOverFirst', 'switch'],
	['fleet_limit', 'retryPolicy', 'fleetLimit', 'switch'],
	['priority', 'retryPolicy', 'priority', 'text'],
	['fair_share_key', 'retryPolicy', 'fairShareKey', 'text'],
	['fair_share_weight', 'retryPolicy', 'fairShareWeight', 'whole'],
	['retry_budget_percent', 'retryPolicy', 'retryBudgetPercent', 'whole'],
	['retry_budget_floor_per_s', 'retryPolicy', 'retryBudgetFloorPerS', 'whole'],
	['retry_budget_window_ms', 'retryPolicy', 'retryBudgetWindowMs', 'whole'],
	['hedge', 'retryPolicy', 'hedge', 'text'],
	['hedge_delay_ms', 'retryPolicy', 'hedgeDelayMs', 'whole'],
	['hedge_min_ms', 'retryPolicy', 'hedgeMinMs', 'whole'],
	['hedge_max_ms', 'retryPolicy', 'hedgeMaxMs', 'whole'],
	['max_hedges', 'retryPolicy', 'maxHedges', 'whole'],
	['trip_rule', 'breaker', 'tripRule', 'text'],
	['threshold', 'breaker', 'threshold', 'whole'],
	['window_ms', 'breaker', 'windowMs', 'whole'],
	['failure_rate', 'breaker', 'failureRate', 'number'],
	['min_calls', 'breaker', 'minCalls', 'whole'],
	['open_ms', 'breaker', 'openMs', 'whole'],
	['open_growth', 'breaker', 'openGrowth', 'number'],
	['open_max_ms', 'breaker', 'openMaxMs', 'whole'],
	['probe_interval_ms', 'breaker', 'probeIntervalMs', 'whole'],
	['half_open_probes', 'breaker', 'halfOpenProbes', 'whole'],
	['successes_to_close', 'breaker', 'successesToClose', 'whole'],
];

const PLACE = { retryPolicy: 'Retry Policy', breaker: 'Breaker' } as const;

/** The chain settings the user set in these collections, onto `config`. */
export function applyPolicy(
	config: ChainConfig,
	collections: Record<Row[1], IDataObject>,
	read: FieldReader,
): void {
	for (const [setting, collection, param, kind] of ROWS) {
		const raw = collections[collection][param];
		const where = PLACE[collection];
		const v =
			kind === 'text'
				? read.text(raw)
				: kind === 'switch'
					? read.bool(raw, param, where)
					: read.num(raw, param, where, kind === 'whole');
		if (v !== undefined && v !== '') (config as unknown as Record<string, unknown>)[setting] = v;
	}
}

/** The table's parameter of each setting (for tests and docs). */
export const POLICY_PARAMETERS: ReadonlyArray<readonly [string, string, string]> = ROWS.map(
	([setting, collection, param]) => [setting, collection, param] as const,
);
