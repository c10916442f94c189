// Opens the event source a trigger's parameters ask for, through n8n's built-in credentials and
// the same pooled clients as the stores.
import type { ITriggerFunctions } from 'n8n-workflow';
import { postgresOptions, redisOptions, type StoreSettings } from '../store/open';
import type * as PostgresModule from '../store/postgres';
import type * as RedisModule from '../store/redis';
import { MemoryEventSource } from './memoryEvents';
import type * as PostgresEventsModule from './postgresEvents';
import type * as RedisEventsModule from './redisEvents';
import type { EventSource } from './source';

// ioredis and pg load only when their store is chosen, as for the stores.
/* eslint-disable @typescript-eslint/no-require-imports */
const load = {
	redis: () => require('../store/redis') as typeof RedisModule,
	redisEvents: () => require('./redisEvents') as typeof RedisEventsModule,
	postgres: () => require('../store/postgres') as typeof PostgresModule,
	postgresEvents: () => require('./postgresEvents') as typeof PostgresEventsModule,
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** `consumer` names who claims the events: the trigger's workflow (its instances share them). */
export async function openEventSource(
	ctx: ITriggerFunctions,
	s: StoreSettings,
	scope: string,
	consumer: string,
): Promise<EventSource> {
	if (s.kind === 'redis') {
		const { RedisStore, redisClient } = load.redis();
		const client = redisClient(
			redisOptions(await ctx.getCredentials('redis'), s.cluster, ctx.getNode()),
		);
		const stream = new RedisStore(client, scope, s.prefix).eventsKey();
		return new (load.redisEvents().RedisEventSource)(client, stream, consumer);
	}
	if (s.kind === 'postgres') {
		const o = postgresOptions(await ctx.getCredentials('postgres'));
		const { postgresPool, postgresConnection } = load.postgres();
		return new (load.postgresEvents().PostgresEventSource)(
			postgresPool(o),
			postgresConnection(o),
			s.table,
			scope,
			consumer,
		);
	}
	return new MemoryEventSource(scope);
}
