// Version 2's parameters, described as data: the operation, the credentials, the chain, what
// happens on exhaustion, the policy and the store. Each setting is shown only under the
// operations that use it.
import type { INodeProperties } from 'n8n-workflow';
import { answerCheck } from './answerCheck';
import { credentialTypesUsed } from './credentials';
import { providerRow } from './provider';
import { breaker, retryPolicy } from './policy';
import { keyQuotas } from './keyQuotas';
import { store } from './store';

const CALL_CHAIN = { show: { operation: ['callChain'] } };
const MAX_ITEM_CONCURRENCY =
	"The most items of one execution in flight at once, whatever the providers take (a provider's Max In Flight caps its own share too)";
const FIXED_CONCURRENCY =
	'Items of one execution in flight at once. Their first calls race before a failure is recorded: a dead provider gets at most threshold + concurrency - 1 calls.';

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
				name: 'Get Metrics',
				value: 'getMetrics',
				action: 'Get metrics of each provider',
				description:
					'Prometheus text (state gauge and counters per provider) in the metrics field, for a Respond to Webhook',
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
		placeholder: 'e.g. primary, fallback',
		description: 'Comma-separated provider names; empty resets every provider of the chain',
		displayOptions: { show: { operation: ['reset'] } },
	},
	...credentialTypesUsed,
	{
		displayName: 'Providers',
		name: 'providers',
		type: 'fixedCollection',
		default: {},
		placeholder: 'Add Provider',
		typeOptions: {
			multipleValues: true,
			sortable: true,
			fixedCollection: { itemTitle: '={{ $collection.item.value.name }}' },
		},
		description: 'The fallback chain, tried in this order',
		options: [{ displayName: 'Provider', name: 'provider', values: providerRow }],
	},
	{
		displayName: 'On Exhaustion',
		name: 'onExhaustion',
		type: 'options',
		default: 'deferred',
		displayOptions: CALL_CHAIN,
		options: [
			{ name: 'Send to Deferred Output', value: 'deferred' },
			{ name: 'Use Default Value (Degraded Success)', value: 'default' },
		],
	},
	{
		displayName:
			"Connect the deferred output to a Wait node that resumes at the item's retry_at, then back into this node: the item is tried again then (give Idempotency Key a stable field, e.g. the ticket ID, so the vendor sees the same key). The example workflow deferred-retry.json shows it.",
		name: 'deferredNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { operation: ['callChain'], onExhaustion: ['deferred'] } },
	},
	{
		displayName: 'Default Value (JSON)',
		name: 'defaultValueJson',
		type: 'json',
		default: '{}',
		description: 'What success carries when every provider is exhausted, e.g. {"text": ""}',
		displayOptions: { show: { operation: ['callChain'], onExhaustion: ['default'] } },
	},
	answerCheck,
	retryPolicy,
	breaker,
	keyQuotas,
	{
		displayName: 'Item Concurrency',
		name: 'itemConcurrency',
		type: 'number',
		default: 1,
		typeOptions: { minValue: 1 },
		displayOptions: { show: { operation: ['callChain'], '@version': [2] } },
		description: FIXED_CONCURRENCY,
	},
	{
		displayName: 'Item Concurrency',
		name: 'itemConcurrencyMode',
		type: 'options',
		default: 'auto',
		displayOptions: { show: { operation: ['callChain'], '@version': [{ _cnd: { gte: 2.1 } }] } },
		options: [
			{
				name: 'Auto',
				value: 'auto',
				description:
					'Learned from how each provider answers: up to its breaker threshold before its first success, growing with successes, cut by a 429, a timeout or a slowing first byte (to half the first time, to 0.7 after, then half the way back per round)',
			},
			{
				name: 'Fixed',
				value: 'fixed',
				description: 'A number of items in flight at once',
			},
		],
		description: 'How many items of one execution are in flight at once',
	},
	{
		displayName: 'Items at Once',
		name: 'itemConcurrency',
		type: 'number',
		default: 1,
		typeOptions: { minValue: 1 },
		displayOptions: {
			show: {
				operation: ['callChain'],
				itemConcurrencyMode: ['fixed'],
				'@version': [{ _cnd: { gte: 2.1 } }],
			},
		},
		description: FIXED_CONCURRENCY,
	},
	// Two entries of one parameter, a default each (the version table's): n8n saves only what a
	// user changed, so 2.1 keeps 256 and 2.2 starts at 1024.
	{
		displayName: 'Max Item Concurrency',
		name: 'maxItemConcurrency',
		type: 'number',
		default: 256,
		typeOptions: { minValue: 1 },
		displayOptions: {
			show: { operation: ['callChain'], itemConcurrencyMode: ['auto'], '@version': [2.1] },
		},
		description: MAX_ITEM_CONCURRENCY,
	},
	{
		displayName: 'Max Item Concurrency',
		name: 'maxItemConcurrency',
		type: 'number',
		default: 1024,
		typeOptions: { minValue: 1 },
		displayOptions: {
			show: {
				operation: ['callChain'],
				itemConcurrencyMode: ['auto'],
				'@version': [{ _cnd: { gte: 2.2 } }],
			},
		},
		description: MAX_ITEM_CONCURRENCY,
	},
	...store,
];
