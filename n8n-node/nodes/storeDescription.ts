// The store settings every node of the package reads the same way (lib/store/open.ts
// readStoreSettings): one definition of each field, worded per node where the node needs it.
import { STORE_DEFAULTS } from '../lib/engineConstants';
import type { INodeCredentialDescription, INodeProperties } from 'n8n-workflow';

export function stateStore(description?: string): INodeProperties {
	return {
		displayName: 'State Store',
		name: 'stateStore',
		type: 'options',
		default: 'memory',
		...(description === undefined ? {} : { description }),
		options: [
			{ name: 'In Memory (This n8n Process)', value: 'memory' },
			{ name: 'Redis (Shared by All Workers)', value: 'redis' },
			{ name: 'Postgres (Shared by All Workers)', value: 'postgres' },
		],
	};
}

export function memoryNotice(text: string): INodeProperties {
	return {
		displayName: text,
		name: 'memoryNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { stateStore: ['memory'] } },
	};
}

/** The Store Options collection, shown for a shared store only. */
export function storeOptions(options: INodeProperties[]): INodeProperties {
	return {
		displayName: 'Store Options',
		name: 'storeOptions',
		type: 'collection',
		default: {},
		placeholder: 'Change Store Options',
		displayOptions: { show: { stateStore: ['redis', 'postgres'] } },
		options,
	};
}

export function keyPrefix(description: string): INodeProperties {
	return {
		displayName: 'Key Prefix',
		name: 'keyPrefix',
		type: 'string',
		default: STORE_DEFAULTS.keyPrefix,
		description,
	};
}

export const redisCluster: INodeProperties = {
	displayName: 'Redis Cluster',
	name: 'redisCluster',
	type: 'boolean',
	default: false,
	description:
		"Whether to treat the credential's host:port as a cluster seed node (database must be 0)",
};

export function tableName(description: string): INodeProperties {
	return {
		displayName: 'Table Name',
		name: 'tableName',
		type: 'string',
		default: STORE_DEFAULTS.tableName,
		description,
	};
}

/** State Scope; `workflowName` is how the node names the one-workflow choice. */
export function stateScope(workflowName: string, description?: string): INodeProperties {
	return {
		displayName: 'State Scope',
		name: 'stateScope',
		type: 'options',
		default: 'provider',
		...(description === undefined ? {} : { description }),
		options: [
			{ name: 'Provider Name (Shared Across Workflows)', value: 'provider' },
			{ name: workflowName, value: 'workflow' },
		],
	};
}

/** The shared store's connection, from n8n's own Redis and Postgres credentials. */
export const storeCredentials: INodeCredentialDescription[] = [
	{ name: 'redis', required: true, displayOptions: { show: { stateStore: ['redis'] } } },
	{ name: 'postgres', required: true, displayOptions: { show: { stateStore: ['postgres'] } } },
];
