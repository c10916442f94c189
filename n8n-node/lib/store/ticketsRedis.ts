// Guard tickets on Redis (see tickets.ts): loaded only when the Redis store is chosen.
import { STORE_DEFAULTS } from '../engineConstants';
import { RedisStore, type redisClient } from './redis';
import type { TicketStore } from './tickets';

// Delete-if-equal in one script: two reports racing for one ticket, one wins.
const CLAIM = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

type Client = ReturnType<typeof redisClient> & {
	rpcClaim?: (numKeys: number, ...args: string[]) => Promise<number>;
};

/** Redis: one key per ticket in the scope's hash slot, SET NX PX at Check, CLAIM at Report. */
export class RedisTickets implements TicketStore {
	private readonly keys: RedisStore;
	constructor(
		private readonly client: Client,
		scope: string,
		prefix: string = STORE_DEFAULTS.keyPrefix,
	) {
		this.keys = new RedisStore(client, scope, prefix);
		if (!client.rpcClaim) client.defineCommand('rpcClaim', { lua: CLAIM });
	}

	async put(id: string, text: string, ttlMs: number): Promise<void> {
		const ok = await this.client.set(this.keys.key(id, 'ticket'), text, 'PX', ttlMs, 'NX');
		if (ok !== 'OK') throw new Error(`ticket ${id} is already recorded`);
	}

	async claim(id: string, text: string): Promise<boolean> {
		return (
			(await (this.client as Required<Client>).rpcClaim(1, this.keys.key(id, 'ticket'), text)) === 1
		);
	}
}
