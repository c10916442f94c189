// The trigger's panel: which store and scope to watch, and which transitions fire it.
import type { INodeProperties } from 'n8n-workflow';
import { SPEND_CAP_REACHED } from '../../lib/trigger/payload';
import {
	keyPrefix,
	memoryNotice,
	redisCluster,
	stateScope,
	stateStore,
	storeOptions,
	tableName,
} from '../storeDescription';

export const properties: INodeProperties[] = [
	stateStore('The store the Resilient Provider Call nodes to watch use'),
	memoryNotice(
		'In memory, this trigger sees only the transitions made in its own n8n process. In queue mode the workers run the executions, so it sees none of theirs: use Redis or Postgres there.',
	),
	storeOptions([
		keyPrefix('As in the calling nodes. Events: the stream &lt;prefix&gt;{&lt;scope&gt;}:events.'),
		redisCluster,
		tableName('As in the calling nodes. Events: the table &lt;table&gt;_events.'),
	]),
	stateScope('One Workflow', 'The State Scope of the calling nodes to watch'),
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
			'Which breaker transitions (and spend caps reached) start an execution. Half-open is entered at the first call after the open window, so with no traffic there is none.',
		options: [
			{ name: 'Opened (Provider Considered Down)', value: 'open' },
			{ name: 'Closed (Provider Recovered)', value: 'closed' },
			{ name: 'Half-Open (Probing Began)', value: 'half_open' },
			{
				name: 'Spend Cap Reached',
				value: SPEND_CAP_REACHED,
				description:
					"A provider's Spend Cap was reached for its UTC day or month: no worker calls it until the period ends",
			},
		],
	},
];
