// Key Quotas: what the Fair Share Key may use of the chain per period, for the whole fleet
// (src/limits/key_quota.rs decides; this is the panel).
import type { INodeProperties } from 'n8n-workflow';

export const keyQuotas: INodeProperties = {
	displayName: 'Key Quotas',
	name: 'keyQuotas',
	type: 'fixedCollection',
	default: {},
	placeholder: 'Add Quota',
	typeOptions: { multipleValues: true },
	displayOptions: { show: { operation: ['callChain'] } },
	description:
		"What the Fair Share Key (Retry Policy; by workflow where empty) may use of this chain per minute, UTC day or UTC month, across every execution and worker. A key over a quota waits for the minute's end or goes to the deferred output with retry_at at the period's end, while other keys go on. Tokens and spend are held at each call's estimate while it is out and settled at the usage its answer reports (spend at each provider's prices, Token Limits); the last call let through may pass a quota by its own size.",
	options: [
		{
			displayName: 'Quota',
			name: 'quota',
			values: [
				{
					displayName: 'Count',
					name: 'measure',
					type: 'options',
					default: 'requests',
					options: [
						{
							name: 'Requests',
							value: 'requests',
							description: 'Calls to any provider of the chain',
						},
						{
							name: 'Spend',
							value: 'spend',
							description: "Cost at each provider's prices (its Token Limits), in their currency",
						},
						{ name: 'Tokens', value: 'tokens', description: 'Input and output tokens' },
					],
				},
				{
					displayName: 'Per',
					name: 'per',
					type: 'options',
					default: 'day',
					options: [
						{ name: 'Day (UTC)', value: 'day' },
						{ name: 'Minute', value: 'minute' },
						{ name: 'Month (UTC)', value: 'month' },
					],
				},
				{
					displayName: 'At Most',
					name: 'atMost',
					type: 'number',
					default: 1000,
					typeOptions: { minValue: 0 },
					description: 'Requests or tokens (whole numbers), or an amount of spend',
				},
			],
		},
	],
};
