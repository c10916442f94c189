// Where provider state lives (version 2): every operation reads it, so these stay shown.
import { STORE_DEFAULTS } from '../../../lib/engineConstants';
import type { INodeProperties } from 'n8n-workflow';
import {
	keyPrefix,
	memoryNotice,
	redisCluster,
	stateScope,
	stateStore,
	storeOptions,
	tableName,
} from '../../storeDescription';

export const store: INodeProperties[] = [
	stateStore(),
	memoryNotice(
		'In-memory state is shared by every execution in this n8n process, but not between queue-mode workers',
	),
	storeOptions([
		keyPrefix(
			"Start of every Redis key, e.g. rpc: gives keys such as rpc:{global}:openai:breaker (then the scope, the provider's name and the row)",
		),
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
			description: 'Longest wait for one store operation before On Store Failure applies',
		},
		redisCluster,
		tableName('Postgres table, created on first use'),
	]),
	stateScope('This Workflow'),
];
