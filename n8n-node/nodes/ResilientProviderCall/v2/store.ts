// Where provider state lives (version 2): every operation reads it, so these stay shown.
import type { INodeProperties } from 'n8n-workflow';

export const store: INodeProperties[] = [
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
			'In-memory state is shared by every execution in this n8n process, but not between queue-mode workers',
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
				default: 'rpc:',
				description:
					"Start of every Redis key, e.g. rpc: gives keys such as rpc:{global}:openai:breaker (then the scope, the provider's name and the row)",
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
				default: 2000,
				description: 'Longest wait for one store operation before On Store Failure applies',
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
				default: 'resilient_provider_state',
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
];
