// Opens the state store the node's parameters ask for, through n8n's built-in credentials.
import { STORE_DEFAULTS } from '../engineConstants';
import {
	ICredentialDataDecryptedObject,
	IExecuteFunctions,
	INode,
	ISupplyDataFunctions,
	NodeOperationError,
} from 'n8n-workflow';
import { FailoverStore } from './failover';
import { MemoryStore } from './memory';
import type * as PostgresModule from './postgres';
import type * as RedisModule from './redis';
import type { StateStore } from './types';
import { MemoryTickets, type TicketStore } from './tickets';
import type * as TicketsPostgresModule from './ticketsPostgres';
import type * as TicketsRedisModule from './ticketsRedis';

// ioredis and pg load only when their store is chosen: a memory-store user needs neither.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const redisModule = () => require('./redis') as typeof RedisModule;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const postgresModule = () => require('./postgres') as typeof PostgresModule;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ticketsRedis = () => require('./ticketsRedis') as typeof TicketsRedisModule;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ticketsPostgres = () => require('./ticketsPostgres') as typeof TicketsPostgresModule;

/** Call Chain's execute context or the Resilient Chat Model's supply-data context. */
type NodeContext = IExecuteFunctions | ISupplyDataFunctions;

export interface StoreSettings {
	kind: 'memory' | 'redis' | 'postgres';
	prefix: string;
	cluster: boolean;
	table: string;
	timeoutMs: number;
	failOpen: boolean;
}

export function storeSettings(ctx: NodeContext): StoreSettings {
	return readStoreSettings(
		(name, fallback) => ctx.getNodeParameter(name, 0, fallback),
		ctx.getNode(),
	);
}

/** The store parameters, read through `param` (an action node's or a trigger's getter). */
export function readStoreSettings(
	param: (name: string, fallback: object | string) => unknown,
	node: INode,
): StoreSettings {
	const kind = param('stateStore', 'memory') as StoreSettings['kind'];
	const o = param('storeOptions', {}) as Record<string, unknown>;
	const s: StoreSettings = {
		kind,
		prefix: String(o.keyPrefix ?? STORE_DEFAULTS.keyPrefix),
		cluster: o.redisCluster === true,
		table: String(o.tableName ?? STORE_DEFAULTS.tableName),
		timeoutMs: Number(o.operationTimeoutMs ?? STORE_DEFAULTS.operationTimeoutMs),
		failOpen: (o.onStoreFailure ?? 'failOpen') === 'failOpen',
	};
	if (!['memory', 'redis', 'postgres'].includes(s.kind))
		throw new NodeOperationError(
			node,
			`Node: "State Store" must be memory, redis or postgres, got ${JSON.stringify(String(s.kind).slice(0, 50))}`,
		);
	if (!/^[A-Za-z0-9_:.-]{0,64}$/.test(s.prefix))
		throw new NodeOperationError(
			node,
			`Store Options: "Key Prefix" may hold only letters, digits and _ : . - (64 at most), got "${s.prefix.slice(0, 80)}"`,
		);
	if (s.kind === 'postgres' && !postgresModule().validTableName(s.table))
		throw new NodeOperationError(
			node,
			`Store Options: "Table Name" must be a lower-case SQL identifier ([a-z_][a-z0-9_]*), got "${s.table.slice(0, 80)}"`,
		);
	if (!(s.timeoutMs >= 10 && s.timeoutMs <= 60_000))
		throw new NodeOperationError(
			node,
			`Store Options: "Operation Timeout (ms)" must be between 10 and 60000, got ${s.timeoutMs}`,
		);
	return s;
}

/** The shared store behind this execution (pooled per credential), or null for memory. */
/** The shared store's rows per scope; null for the memory store (each item's own). */
export type SharedStore = ((scope: string) => StateStore) | null;

export async function sharedStore(ctx: NodeContext, s: StoreSettings): Promise<SharedStore> {
	if (s.kind === 'redis') {
		const { RedisStore, redisClient } = redisModule();
		const client = redisClient(
			redisOptions(await ctx.getCredentials('redis'), s.cluster, ctx.getNode()),
		);
		return (scope) => new RedisStore(client, scope, s.prefix);
	}
	if (s.kind === 'postgres') {
		const { PostgresStore, postgresPool } = postgresModule();
		const pool = postgresPool(postgresOptions(await ctx.getCredentials('postgres')));
		return (scope) => new PostgresStore(pool, scope, s.table);
	}
	return null;
}

/** n8n's `redis` credential as the Redis store's options. */
export function redisOptions(
	c: ICredentialDataDecryptedObject,
	cluster: boolean,
	node: INode,
): RedisModule.RedisOptions {
	if (cluster && Number(c.database ?? 0) !== 0)
		throw new NodeOperationError(
			node,
			"Redis Cluster has only database 0: set the credential's Database Number to 0",
		);
	return {
		host: String(c.host),
		port: Number(c.port ?? 6379),
		database: Number(c.database ?? 0),
		user: c.user ? String(c.user) : undefined,
		password: c.password ? String(c.password) : undefined,
		ssl: c.ssl === true,
		disableTlsVerification: c.disableTlsVerification === true,
		cluster,
	};
}

/** n8n's `postgres` credential as the Postgres store's options. */
export function postgresOptions(c: ICredentialDataDecryptedObject): PostgresModule.PostgresOptions {
	return {
		host: String(c.host),
		port: Number(c.port ?? 5432),
		database: String(c.database),
		user: String(c.user),
		password: c.password ? String(c.password) : undefined,
		ssl: (c.ssl as 'disable' | 'allow' | 'require') ?? 'disable',
		allowUnauthorizedCerts: c.allowUnauthorizedCerts === true,
		maxConnections: Number(c.maxConnections ?? 10),
	};
}

/** A fresh guard per item: fail-open degrades only the items that met the failure. */
export function itemStore(
	shared: SharedStore,
	scope: string,
	s: StoreSettings,
	logger: IExecuteFunctions['logger'],
): FailoverStore {
	return new FailoverStore(
		shared ? shared(scope) : new MemoryStore(scope),
		scope,
		s.timeoutMs,
		s.failOpen,
		logger,
	);
}

/** The guard's ticket store beside the state rows (same credential, same scope). */
export async function sharedTickets(
	ctx: IExecuteFunctions,
	s: StoreSettings,
): Promise<(scope: string) => TicketStore> {
	if (s.kind === 'redis') {
		const client = redisModule().redisClient(
			redisOptions(await ctx.getCredentials('redis'), s.cluster, ctx.getNode()),
		);
		const { RedisTickets } = ticketsRedis();
		return (scope) => new RedisTickets(client, scope, s.prefix);
	}
	if (s.kind === 'postgres') {
		const pool = postgresModule().postgresPool(
			postgresOptions(await ctx.getCredentials('postgres')),
		);
		const { PostgresTickets } = ticketsPostgres();
		return (scope) => new PostgresTickets(pool, scope, s.table);
	}
	return (scope) => new MemoryTickets(scope);
}
