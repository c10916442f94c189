// Version 2's parameters, described as data: the operation, the credentials, the chain, what
// happens on exhaustion, the policy and the store. Each setting is shown only under the
// operations that use it.
import type { INodeProperties } from 'n8n-workflow';
import { credentialTypesUsed } from './credentials';
import { providerRow } from './provider';
import { breaker, retryPolicy } from './policy';
import { store } from './store';

const CALL_CHAIN = { show: { operation: ['callChain'] } };

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
	retryPolicy,
	breaker,
	{
		displayName: 'Item Concurrency',
		name: 'itemConcurrency',
		type: 'number',
		default: 1,
		typeOptions: { minValue: 1 },
		displayOptions: CALL_CHAIN,
		description:
			'Items of one execution in flight at once. Their first calls race before a failure is recorded: a dead provider gets at most threshold + concurrency - 1 calls.',
	},
	...store,
];
