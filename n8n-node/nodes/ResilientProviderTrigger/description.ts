// The trigger's panel: which store and scope to watch, and which transitions fire it.
import type { INodeProperties } from 'n8n-workflow';

export const properties: INodeProperties[] = [
	{
		displayName: 'State Store',
		name: 'stateStore',
		type: 'options',
		default: 'memory',
		description: 'The store the Resilient Provider Call nodes to watch use',
		options: [
			{ name: 'In Memory (This n8n Process)', value: 'memory' },
			{ name: 'Redis (Shared by All Workers)', value: 'redis' },
			{ name: 'Postgres (Shared by All Workers)', value: 'postgres' },
		],
	},
	{
		displayName:
			'In memory, this trigger sees only the transitions made in its own n8n process. In queue mode the workers run the executions, so it sees none of theirs: use Redis or Postgres there.',
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
					'As in the calling nodes. Events: the stream &lt;prefix&gt;{&lt;scope&gt;}:events.',
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
				description: 'As in the calling nodes. Events: the table &lt;table&gt;_events.',
			},
		],
	},
	{
		displayName: 'State Scope',
		name: 'stateScope',
		type: 'options',
		default: 'provider',
		description: 'The State Scope of the calling nodes to watch',
		options: [
			{ name: 'Provider Name (Shared Across Workflows)', value: 'provider' },
			{ name: 'One Workflow', value: 'workflow' },
		],
	},
	{
		displayName: 'Workflow ID',
		name: 'scopeWorkflowId',
		type: 'string',
		default: '',
		required: true,
		description: 'The ID of the workflow whose calling nodes use State Scope: This Workflow',
		displayOptions: { show: { stateScope: ['workflow'] } },
	},
	{
		displayName: 'Fire On',
		name: 'events',
		type: 'multiOptions',
		default: ['open', 'closed'],
		description:
			'Which breaker transitions start an execution. Half-open is entered at the first call after the open window, so with no traffic there is none.',
		options: [
			{ name: 'Opened (Provider Considered Down)', value: 'open' },
			{ name: 'Closed (Provider Recovered)', value: 'closed' },
			{ name: 'Half-Open (Probing Began)', value: 'half_open' },
		],
	},
];
