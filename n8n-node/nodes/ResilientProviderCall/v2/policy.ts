// Retry Policy and Breaker (version 2): the node's defaults for every provider, shown under Call
// Chain only. Defaults come from the engine's one defaults table (engineConstants.ts): Call
// Chain's column here, the chat model's (CHAT_DEFAULTS) in its own panel, from the same fields.
import type { INodeProperties } from 'n8n-workflow';
import { CHAT_DEFAULTS, ENGINE_DEFAULTS, MAX_HEDGES } from '../../../lib/engineConstants';
import { numberField } from './numberField';

const CALL_CHAIN = { show: { operation: ['callChain'] } };

/** A column of the engine's defaults table. */
export type Defaults = typeof ENGINE_DEFAULTS | typeof CHAT_DEFAULTS;

/** The Retry Policy collection with the defaults of `D` (Call Chain's or the chat model's). */
export const retryPolicyWith = (D: Defaults): INodeProperties => ({
	displayName: 'Retry Policy',
	name: 'retryPolicy',
	type: 'collection',
	default: {},
	placeholder: 'Change Retry Policy',
	displayOptions: CALL_CHAIN,
	options: [
		{
			displayName: 'Add Idempotency-Key (POST/PATCH)',
			name: 'addIdempotencyKey',
			type: 'boolean',
			default: true,
			description:
				'Whether to send an Idempotency-Key header with POST and PATCH, so a retried request is not carried out twice',
		},
		{
			displayName: 'Backoff Strategy',
			name: 'strategy',
			type: 'options',
			default: D.strategy,
			options: [
				{ name: 'Full Jitter (Recommended)', value: 'full_jitter' },
				{ name: 'Equal Jitter', value: 'equal_jitter' },
				{ name: 'Decorrelated', value: 'decorrelated' },
				{ name: 'None (Lockstep, Avoid)', value: 'none' },
			],
		},
		numberField('Base Delay (ms)', 'baseMs', D.base_ms, 'Ceiling of the first retry'),
		{
			displayName: 'Count 429 Against Provider',
			name: 'count429',
			type: 'boolean',
			default: D.count_429,
			description: "Whether a 429 (rate limited) counts toward opening the provider's breaker",
		},
		numberField(
			'Defer Spread (ms)',
			'deferSpreadMs',
			D.defer_spread_ms,
			'Jitter added to retry_at so deferred items do not return together',
		),
		{
			displayName: 'Fail Over First',
			name: 'failOverFirst',
			type: 'boolean',
			default: D.fail_over_first,
			description:
				'Whether a retryable failure moves the item on at once to the next provider that can take the call now, instead of backing off on this one (not tried again for the item); the last provider keeps its retries with backoff',
			// A chain's choice: Check Provider admits one call and has nothing to move on to.
			displayOptions: { show: { '/operation': ['callChain'] } },
		},
		{
			displayName: 'Fair Share Key',
			name: 'fairShareKey',
			type: 'string',
			default: '',
			placeholder: 'e.g. {{ $json.customerId }}',
			description:
				"Where a provider's fleet concurrency limit is spent, calls of one priority share it between the keys calling, by Fair Share Weight, across every worker: a key asking for less than its part gets all it asks, the others split the rest. An expression may set it per item (a customer, a tenant). Empty: by workflow from Call Chain 2.2 and the chat model 1.2, by worker before. With room, every key goes at once.",
		},
		numberField(
			'Fair Share Weight',
			'fairShareWeight',
			D.fair_share_weight,
			"The Fair Share Key's weight, 1 to 1000: a key at 3 gets three times the part of a key at 1 where the fleet concurrency limit is spent",
		),
		{
			displayName: 'Fleet Concurrency Limit',
			name: 'fleetLimit',
			type: 'boolean',
			default: true,
			description:
				"Whether the calls in flight to each provider across every execution and worker stay within the limit learned from the provider: it starts at the breaker's threshold, grows while calls are served and is cut by any worker's 429, overload 503 or timeout. Calls over it wait their turn (a chat model moves on to the next model; Check Provider defers). Max In Flight stays a hard ceiling above it. Not added: on from version 2.1 (the chat model's 1.1), off before.",
		},
		numberField(
			'Hedge Delay (ms)',
			'hedgeDelayMs',
			D.hedge_delay_ms,
			'With Hedging on a fixed delay: how long a call may go unanswered before the hedge is sent',
		),
		numberField(
			'Hedge Max Delay (ms)',
			'hedgeMaxMs',
			D.hedge_max_ms,
			"With Hedging after the p95: the longest wait before a hedge, and the wait while the provider's latency is not yet known",
		),
		numberField(
			'Hedge Min Delay (ms)',
			'hedgeMinMs',
			D.hedge_min_ms,
			'With Hedging after the p95: the shortest wait before a hedge',
		),
		{
			displayName: 'Hedging',
			name: 'hedge',
			type: 'options',
			default: D.hedge,
			description:
				'Whether a call unanswered for longer than usual gets a second call to the next provider (the first answer wins, the other call is closed and not counted against its provider); only for calls safe to repeat (GET, PUT, DELETE, a POST with an Idempotency-Key, a model call; a streamed one until its first chunk); a hedge that cannot go at once (breaker, rate limit, Max In Flight, retry budget) is skipped',
			options: [
				{ name: 'Off', value: 'off', description: 'One call at a time' },
				{
					name: 'After a Fixed Delay',
					value: 'fixed',
					description: 'After Hedge Delay with no answer',
				},
				{
					name: "After the Provider's p95",
					value: 'p95',
					description:
						"After the provider's recent 95th-percentile answer time, shared by every execution and worker on the state store, within Hedge Min and Max Delay",
				},
			],
		},
		{
			displayName: 'Idempotency Key',
			name: 'idempotencyKey',
			type: 'string',
			default: '',
			placeholder: 'e.g. {{ $json.orderId }}',
			description:
				'Empty: a hash of the item JSON and the provider name, so a deferred item re-run later sends the same key',
		},
		numberField(
			'Item Budget (ms)',
			'budgetMs',
			D.budget_ms,
			'Total time an item may spend; then it is deferred',
		),
		{
			displayName: 'Max Attempts per Provider',
			name: 'maxAttempts',
			type: 'number',
			default: D.max_attempts,
		},
		numberField('Max Delay (ms)', 'capMs', D.cap_ms, 'Cap of every delay'),
		{
			displayName: 'Max Hedges per Item',
			name: 'maxHedges',
			type: 'number',
			default: D.max_hedges,
			typeOptions: { minValue: 1, maxValue: MAX_HEDGES },
			description: 'With Hedging on: more calls an item may have out at once (1 to 3)',
		},
		numberField(
			'Per-Attempt Deadline (ms)',
			'deadlineMs',
			D.deadline_ms,
			'Whole-response deadline of one attempt',
		),
		{
			displayName: 'Priority',
			name: 'priority',
			type: 'options',
			default: D.priority,
			options: [
				{ name: 'High', value: 'high' },
				{ name: 'Normal', value: 'normal' },
				{ name: 'Low', value: 'low' },
			],
			description:
				"Where a provider's fleet concurrency limit is spent, calls of a higher priority waiting on any worker take the slots that free before calls of a lower one; a worker kept waiting 10 s unserved waits at High until its next call goes, so none is starved. With room, every priority goes at once. An expression may set it per item (low, normal or high). Not added: High for the chat model from version 1.2, Normal otherwise.",
		},
		numberField(
			'Retry Budget (% of Calls)',
			'retryBudgetPercent',
			D.retry_budget_percent,
			'Retries to a provider (and fail-overs to it after a failure) allowed per 100 of its calls over the window, shared by every execution and worker on the state store; first attempts are never held back; 0 turns the budget off',
		),
		numberField(
			'Retry Budget Floor (per Second)',
			'retryBudgetFloorPerS',
			D.retry_budget_floor_per_s,
			'Retries allowed per second of the window whatever the calls, so a quiet provider keeps its retries',
		),
		numberField(
			'Retry Budget Window (ms)',
			'retryBudgetWindowMs',
			D.retry_budget_window_ms,
			'How far back the retry budget counts calls and retries (1 s to 1 h)',
		),
		{
			displayName: 'Retry POST/PATCH Without Key',
			name: 'retryUnsafeMethods',
			type: 'boolean',
			default: D.retry_unsafe_methods,
			description:
				'Whether to retry POST/PATCH without an Idempotency-Key; only for endpoints documented as idempotent',
		},
		numberField(
			'Retry-After Cap (ms)',
			'retryAfterCapMs',
			D.retry_after_cap_ms,
			'Longest server-requested wait slept in place; longer hints close the provider for everyone and the item moves on',
		),
		{
			displayName: 'Retryable Statuses',
			name: 'retryStatuses',
			type: 'string',
			default: D.retry_statuses,
			description: 'Statuses retried on the same provider, e.g. 429,500-599',
		},
		{
			displayName: 'Routing',
			name: 'routing',
			type: 'options',
			default: D.routing,
			description:
				"Which provider of the best tier an item tries first (a provider's Tier and Weight are in its options); the others follow as fallbacks",
			options: [
				{
					name: 'Order',
					value: 'order',
					description: 'As listed: the first admissible provider takes every call',
				},
				{
					name: 'Weighted',
					value: 'weighted',
					description: 'At random in proportion to the Weights: the load is shared',
				},
				{
					name: 'Least Busy',
					value: 'least_busy',
					description:
						'Fewest calls in flight across every execution and worker on the state store',
				},
				{
					name: 'Latency',
					value: 'latency',
					description:
						'Fastest recent median answer time, shared by every execution and worker on the state store; providers within 20% of the fastest share the calls',
				},
			],
		},
		{
			displayName: 'Statuses Counted Against Provider',
			name: 'healthStatuses',
			type: 'string',
			default: D.health_statuses,
			description: '4xx caused by our own request should never be here, e.g. 408,500-599',
		},
		{
			displayName: 'Try Next Provider When Input Is Too Long',
			name: 'nextProviderWhenInputTooLong',
			type: 'boolean',
			default: D.next_provider_when_input_too_long,
			description:
				'Whether an answer that the input exceeds the context length moves the item on to the next provider (e.g. one with a longer context); off: the item fails with reason context_too_long. Never counted against the provider.',
		},
	],
});

export const retryPolicy = retryPolicyWith(ENGINE_DEFAULTS);

const D = ENGINE_DEFAULTS;

export const breaker: INodeProperties = {
	displayName: 'Breaker',
	name: 'breaker',
	type: 'collection',
	default: {},
	placeholder: 'Change Breaker',
	displayOptions: CALL_CHAIN,
	options: [
		{
			displayName: 'Failure Rate',
			name: 'failureRate',
			type: 'number',
			default: D.failure_rate,
			typeOptions: { minValue: 0, maxValue: 1, numberPrecision: 2 },
			description:
				'Share of failed calls that opens the breaker (Trip Rule: failure rate), e.g. 0.5',
		},
		{
			displayName: 'Half-Open Probes',
			name: 'halfOpenProbes',
			type: 'number',
			default: D.half_open_probes,
			description:
				'Real calls let through fleet-wide after the window; 0 = no probe, calls pass and one failure re-arms',
		},
		numberField('Max Open Window (ms)', 'openMaxMs', D.open_max_ms, 'Cap of the growing window'),
		{
			displayName: 'Minimum Calls',
			name: 'minCalls',
			type: 'number',
			default: D.min_calls,
			description: 'Calls within the window before the failure rate is judged',
		},
		numberField('Open Window (ms)', 'openMs', D.open_ms, 'Cooldown after a trip'),
		{
			displayName: 'Open Window Growth',
			name: 'openGrowth',
			type: 'number',
			default: D.open_growth,
			typeOptions: { numberPrecision: 2 },
			description: 'Factor applied to the window on each re-trip, e.g. 2',
		},
		{
			displayName: 'Probe Interval (ms)',
			name: 'probeIntervalMs',
			type: 'number',
			default: D.probe_interval_ms,
			typeOptions: { minValue: 0 },
			description:
				'A broken provider is probed this often, e.g. 10000 (one call for the whole fleet), so it is back in use within about this long of its recovery; growth starts after 5 minutes of failed probes, to 3 intervals. 0 = the growing Open Window. Not added: 10 s from version 2.2 (the chat model 1.2), 0 before.',
		},
		{
			displayName: 'Successes to Close',
			name: 'successesToClose',
			type: 'number',
			default: D.successes_to_close,
		},
		{
			displayName: 'Threshold',
			name: 'threshold',
			type: 'number',
			default: D.threshold,
			description: 'Consecutive failures that open the breaker',
		},
		{
			displayName: 'Trip Rule',
			name: 'tripRule',
			type: 'options',
			default: D.trip_rule,
			options: [
				{ name: 'Consecutive Failures Within Window', value: 'consecutive' },
				{ name: 'Failure Rate Over Window', value: 'failure_rate' },
			],
		},
		numberField('Window (ms)', 'windowMs', D.window_ms, 'Failures older than this do not count'),
	],
};
