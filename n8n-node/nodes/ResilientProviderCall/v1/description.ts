// Frozen: the released version 1; version 2 repeating some of these fields is accepted by design.
// The node's parameters, described as data (as n8n's own nodes do). Defaults of engine settings
// come from the engine's one defaults table (engineConstants.ts, generated from src/config/mod.rs).
import {
	STORE_DEFAULTS,
	ENGINE_DEFAULTS as D,
	PROVIDER_SUGGESTED as S,
} from '../../../lib/engineConstants';
import type { INodeProperties } from 'n8n-workflow';

const ms = (
	displayName: string,
	name: string,
	def: number,
	description: string,
): INodeProperties => ({
	displayName,
	name,
	type: 'number',
	default: def,
	typeOptions: { minValue: 0 },
	description,
});

const provider: INodeProperties[] = [
	{
		displayName: 'Name',
		name: 'name',
		type: 'string',
		default: '',
		required: true,
		description: 'Unique in the chain; provider state (breaker, cooldown) is kept under this name',
	},
	{
		displayName: 'Method',
		name: 'method',
		type: 'options',
		default: 'GET',
		options: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'].map((m) => ({ name: m, value: m })),
	},
	{
		displayName: 'URL',
		name: 'url',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'https://api.example.com/v1/things',
	},
	{ displayName: 'Query (JSON)', name: 'queryJson', type: 'json', default: '{}' },
	{
		displayName: 'Headers (JSON)',
		name: 'headersJson',
		type: 'json',
		default: '{}',
		description: 'Plain headers. Keys go in the Resilient Provider Secrets credential, never here.',
	},
	{
		displayName: 'Body (JSON)',
		name: 'bodyJson',
		type: 'json',
		default: '',
		description: 'Request body; empty sends none. Expressions work.',
	},
	{
		displayName: 'Secret Name',
		name: 'secretName',
		type: 'string',
		default: '',
		description:
			'Name of a secret in the Resilient Provider Secrets credential (e.g. openai); empty for none',
	},
	{
		displayName: 'Secret Header',
		name: 'secretHeader',
		type: 'string',
		default: 'Authorization',
		description: 'Header that carries the secret value',
	},
	{
		displayName: 'Response Must Contain',
		name: 'requiredPath',
		type: 'string',
		default: '',
		placeholder: 'choices.0.message.content',
		description:
			'Dot path that must hold a non-empty value in the JSON response; otherwise the answer counts as a failure of this provider and the chain moves on',
	},
	ms(
		'Per-Attempt Deadline (ms)',
		'deadlineMs',
		0,
		'Ends the attempt even if bytes still trickle in. 0 = node default.',
	),
	{
		displayName: 'Max Attempts',
		name: 'maxAttempts',
		type: 'number',
		default: 0,
		description: 'Attempts on this provider per item. 0 = node default.',
	},
	{
		displayName: 'Breaker Threshold',
		name: 'threshold',
		type: 'number',
		default: 0,
		description: 'Failures that open the breaker (cool the provider down). 0 = node default.',
	},
	ms(
		'Open Window (ms)',
		'openMs',
		0,
		'How long the provider is skipped once tripped. 0 = node default.',
	),
	{
		displayName: 'Rate Limit: Requests',
		name: 'rateLimitRequests',
		type: 'number',
		default: 0,
		description: 'Soft limit shared by every execution (e.g. 80% of the vendor quota). 0 = none.',
	},
	ms(
		'Rate Limit: Period (ms)',
		'rateLimitPeriodMs',
		S.rate_limit.period_ms,
		'Period of the rate limit',
	),
	{
		displayName: 'Rate Limit: Burst',
		name: 'rateLimitBurst',
		type: 'number',
		default: S.rate_limit.burst,
	},
	{
		displayName: 'Max In Flight',
		name: 'maxInFlight',
		type: 'number',
		default: 0,
		description: 'Cap on calls in flight to this provider across executions. 0 = none.',
	},
];

export const properties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		default: 'callChain',
		options: [
			{
				name: 'Call Chain',
				value: 'callChain',
				action: 'Call a fallback chain of providers',
				description: 'Call the providers in order with retries, breaker and cooldown',
			},
			{
				name: 'Get Provider State',
				value: 'getState',
				action: 'Get the state of each provider',
				description:
					'Breaker state (0 closed, 1 half-open, 2 open) and counters per provider of the chain',
			},
			{
				name: 'Reset Provider',
				value: 'reset',
				action: 'Reset providers',
				description: "Forget providers' breaker, gate and counters",
			},
		],
	},
	{
		displayName: 'Providers to Reset',
		name: 'resetProviders',
		type: 'string',
		default: '',
		placeholder: 'primary, fallback',
		description: 'Comma-separated provider names; empty resets every provider of the chain',
		displayOptions: { show: { operation: ['reset'] } },
	},
	{
		displayName: 'Providers',
		name: 'providers',
		type: 'fixedCollection',
		default: {},
		placeholder: 'Add Provider',
		typeOptions: { multipleValues: true, sortable: true },
		description: 'The fallback chain, tried in this order',
		options: [{ displayName: 'Provider', name: 'provider', values: provider }],
	},
	{
		displayName: 'Retry Policy',
		name: 'retryPolicy',
		type: 'collection',
		default: {},
		placeholder: 'Change Retry Policy',
		options: [
			{
				displayName: 'Add Idempotency-Key (POST/PATCH)',
				name: 'addIdempotencyKey',
				type: 'boolean',
				default: true,
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
			ms('Base Delay (ms)', 'baseMs', D.base_ms, 'Ceiling of the first retry'),
			{
				displayName: 'Count 429 Against Provider',
				name: 'count429',
				type: 'boolean',
				default: D.count_429,
			},
			ms(
				'Defer Spread (ms)',
				'deferSpreadMs',
				D.defer_spread_ms,
				'Jitter added to retry_at so deferred items do not return together',
			),
			{
				displayName: 'Idempotency Key',
				name: 'idempotencyKey',
				type: 'string',
				default: '',
				description:
					'Empty: a hash of the item JSON and the provider name, so a deferred item re-run later sends the same key',
			},
			ms(
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
			ms('Max Delay (ms)', 'capMs', D.cap_ms, 'Cap of every delay'),
			ms(
				'Per-Attempt Deadline (ms)',
				'deadlineMs',
				D.deadline_ms,
				'Whole-response deadline of one attempt',
			),
			{
				displayName: 'Retry POST/PATCH Without Key',
				name: 'retryUnsafeMethods',
				type: 'boolean',
				default: D.retry_unsafe_methods,
				description:
					'Whether to retry POST/PATCH without an Idempotency-Key; only for endpoints documented as idempotent',
			},
			ms(
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
			},
			{
				displayName: 'Statuses Counted Against Provider',
				name: 'healthStatuses',
				type: 'string',
				default: D.health_statuses,
				description: '4xx caused by our own request should never be here',
			},
		],
	},
	{
		displayName: 'Breaker',
		name: 'breaker',
		type: 'collection',
		default: {},
		placeholder: 'Change Breaker',
		options: [
			{
				displayName: 'Failure Rate',
				name: 'failureRate',
				type: 'number',
				default: D.failure_rate,
				typeOptions: { minValue: 0, maxValue: 1, numberPrecision: 2 },
			},
			{
				displayName: 'Half-Open Probes',
				name: 'halfOpenProbes',
				type: 'number',
				default: D.half_open_probes,
				description:
					'Real calls let through fleet-wide after the window; 0 = no probe, calls pass and one failure re-arms',
			},
			ms('Max Open Window (ms)', 'openMaxMs', D.open_max_ms, 'Cap of the growing window'),
			{ displayName: 'Minimum Calls', name: 'minCalls', type: 'number', default: D.min_calls },
			ms('Open Window (ms)', 'openMs', D.open_ms, 'Cooldown after a trip'),
			{
				displayName: 'Open Window Growth',
				name: 'openGrowth',
				type: 'number',
				default: D.open_growth,
				typeOptions: { numberPrecision: 2 },
			},
			{
				displayName: 'Successes to Close',
				name: 'successesToClose',
				type: 'number',
				default: D.successes_to_close,
			},
			{ displayName: 'Threshold', name: 'threshold', type: 'number', default: D.threshold },
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
			ms('Window (ms)', 'windowMs', D.window_ms, 'Failures older than this do not count'),
		],
	},
	{
		displayName: 'Item Concurrency',
		name: 'itemConcurrency',
		type: 'number',
		default: 1,
		typeOptions: { minValue: 1 },
		description:
			'Items of one execution in flight at once. Their first calls race before a failure is recorded: a dead provider gets at most threshold + concurrency - 1 calls.',
	},
	{
		displayName: 'State Store',
		name: 'stateStore',
		type: 'options',
		default: 'memory',
		options: [
			{ name: 'In Memory (This n8n Process)', value: 'memory' },
			{ name: 'Redis (Shared by All Workers)', value: 'redis' },
			{ name: 'Postgres (Shared by All Workers)', value: 'postgres' },
		],
	},
	{
		displayName:
			'In-memory state is shared by every execution in this n8n process, but not between queue-mode workers.',
		name: 'memoryNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { stateStore: ['memory'] } },
	},
	{
		displayName: 'Store Options',
		name: 'storeOptions',
		type: 'collection',
		default: {},
		placeholder: 'Change Store Options',
		displayOptions: { show: { stateStore: ['redis', 'postgres'] } },
		options: [
			{
				displayName: 'Key Prefix',
				name: 'keyPrefix',
				type: 'string',
				default: STORE_DEFAULTS.keyPrefix,
				description:
					'Redis keys: &lt;prefix&gt;{&lt;scope&gt;}:&lt;provider&gt;:&lt;breaker|gate|in_flight&gt;',
			},
			{
				displayName: 'On Store Failure',
				name: 'onStoreFailure',
				type: 'options',
				default: 'failOpen',
				options: [
					{ name: "Fail Open (Use This Process's Memory, Mark the Item)", value: 'failOpen' },
					{ name: 'Fail Closed (Defer the Item: store_unavailable)', value: 'failClosed' },
				],
			},
			{
				displayName: 'Operation Timeout (ms)',
				name: 'operationTimeoutMs',
				type: 'number',
				default: STORE_DEFAULTS.operationTimeoutMs,
			},
			{
				displayName: 'Redis Cluster',
				name: 'redisCluster',
				type: 'boolean',
				default: false,
				description:
					"Whether to treat the credential's host:port as a cluster seed node (database must be 0)",
			},
			{
				displayName: 'Table Name',
				name: 'tableName',
				type: 'string',
				default: STORE_DEFAULTS.tableName,
				description: 'Postgres table, created on first use',
			},
		],
	},
	{
		displayName: 'State Scope',
		name: 'stateScope',
		type: 'options',
		default: 'provider',
		options: [
			{ name: 'Provider Name (Shared Across Workflows)', value: 'provider' },
			{ name: 'This Workflow', value: 'workflow' },
		],
	},
	{
		displayName: 'On Exhaustion',
		name: 'onExhaustion',
		type: 'options',
		default: 'deferred',
		options: [
			{ name: 'Send to Deferred Output', value: 'deferred' },
			{ name: 'Use Default Value (Degraded Success)', value: 'default' },
		],
	},
	{
		displayName: 'Default Value (JSON)',
		name: 'defaultValueJson',
		type: 'json',
		default: '{}',
		displayOptions: { show: { onExhaustion: ['default'] } },
	},
];
