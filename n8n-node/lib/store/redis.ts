// Redis store through n8n's built-in `redis` credential (ioredis). Policy-free: two Lua scripts,
// loaded once (EVALSHA with NOSCRIPT fallback, as ioredis' defineCommand does):
//   read  -> the store's TIME plus every row of the chain, one round trip
//   cas   -> write rows iff their versions are still the expected ones, and append the
//            transition's event (if the rows make one) to the scope's stream in the same script
// Keys: <prefix>{<scope>}:<provider>:<kind>. The hash tag keeps a scope in one Cluster slot, so
// both scripts stay single-slot. Breaker, gate and in-flight rows are separate keys so ordinary
// calls do not contend on the breaker row.
import { STORE_DEFAULTS } from '../engineConstants';
import Redis, { Cluster } from 'ioredis';
import type { RowWrite } from '../engine';
import { KINDS, versioned } from './rowCodec';
import type { Snapshot, StateStore } from './types';

const READ = `
local t = redis.call('TIME')
local out = { t[1], t[2] }
for i, k in ipairs(KEYS) do out[i + 2] = redis.call('GET', k) or false end
return out`;

/** Events kept per scope's stream (approximate MAXLEN: Redis trims whole nodes). While no trigger
 * reads, the newest this many wait; older ones are dropped (README: "Resilient Provider Trigger"). */
export const EVENTS_MAXLEN = 10_000;

// ARGV: ttl_ms, the transition's event ('' for none), then per row key: expected version, new
// value. KEYS: the row keys, then (with an event) the scope's stream, in the same hash slot.
const CAS = `
local n = (#ARGV - 2) / 2
for i = 1, n do
  local cur = redis.call('GET', KEYS[i])
  local v = 0
  if cur then v = tonumber(string.match(cur, '^(%d+)|')) end
  if v ~= tonumber(ARGV[2 * i + 1]) then return 0 end
end
for i = 1, n do redis.call('SET', KEYS[i], ARGV[2 * i + 2], 'PX', ARGV[1]) end
if ARGV[2] ~= '' then
  redis.call('XADD', KEYS[n + 1], 'MAXLEN', '~', '${EVENTS_MAXLEN}', '*', 'event', ARGV[2])
end
return 1`;

type Client = (Redis | Cluster) & {
	rpcRead(numKeys: number, ...args: string[]): Promise<(string | null | false)[]>;
	rpcCas(numKeys: number, ...args: string[]): Promise<number>;
};

export interface RedisOptions {
	host: string;
	port: number;
	database?: number;
	user?: string;
	password?: string;
	ssl?: boolean;
	disableTlsVerification?: boolean;
	/** Treat host:port as the seed of a Redis Cluster (database must be 0). */
	cluster?: boolean;
	prefix?: string;
	/** Rows of idle providers expire after this long. */
	ttlMs?: number;
}

const clients = new Map<string, Client>();

/** One pooled client per credential, reused across items and executions. */
export function redisClient(o: RedisOptions): Client {
	const id = JSON.stringify([
		o.host,
		o.port,
		o.database ?? 0,
		o.user ?? '',
		o.password ?? '',
		!!o.ssl,
		!!o.cluster,
	]);
	let c = clients.get(id);
	if (c) return c;
	const tls = o.ssl ? { rejectUnauthorized: !o.disableTlsVerification } : undefined;
	const common = {
		username: o.user || undefined,
		password: o.password || undefined,
		tls,
		maxRetriesPerRequest: 1,
		// Connecting may take as long as one store operation.
		connectTimeout: STORE_DEFAULTS.operationTimeoutMs,
	};
	const client = o.cluster
		? new Cluster([{ host: o.host, port: o.port }], { redisOptions: common })
		: new Redis({ host: o.host, port: o.port, db: o.database ?? 0, ...common });
	client.on('error', () => undefined); // surfaced per operation; never an unhandled event
	client.defineCommand('rpcRead', { lua: READ });
	client.defineCommand('rpcCas', { lua: CAS });
	c = client as Client;
	clients.set(id, c);
	return c;
}

export async function closeRedisClients(): Promise<void> {
	await Promise.all([...clients.values()].map((c) => c.quit().catch(() => c.disconnect())));
	clients.clear();
}

export class RedisStore implements StateStore {
	private offset = 0; // store clock minus local clock, refreshed on every read
	constructor(
		private readonly client: Client,
		private readonly scope: string,
		private readonly prefix: string = STORE_DEFAULTS.keyPrefix,
		private readonly ttlMs = 7 * 24 * 3600_000,
	) {}

	key(provider: string, kind: string): string {
		// Braces would move the hash tag: the scope is escaped so user text cannot escape its slot.
		return `${this.prefix}{${escapeTag(this.scope)}}:${escapeName(provider)}:${kind}`;
	}

	async read(keys: string[]): Promise<Snapshot> {
		const redisKeys = keys.flatMap((k) => KINDS.map((kind) => this.key(k, kind)));
		const res = await this.client.rpcRead(redisKeys.length, ...redisKeys);
		const now = Number(res[0]) * 1000 + Math.floor(Number(res[1]) / 1000);
		this.offset = now - Date.now();
		const rows = new Array<string>(redisKeys.length);
		for (let i = 0; i < redisKeys.length; i++) rows[i] = (res[i + 2] as string) || '';
		return { now, rows };
	}

	/** The scope's stream of transition events: `<prefix>{<scope>}:events`, in the scope's slot
	 * (provider keys have three parts after the tag, so no provider name reaches it). */
	eventsKey(): string {
		return `${this.prefix}{${escapeTag(this.scope)}}:events`;
	}

	async write(provider: string, writes: RowWrite[], event?: string | null): Promise<boolean> {
		// A row naming its own key (a Fair Share Key's quota row): in the scope's slot too.
		const redisKeys = writes.map((w) => this.key(w.key ?? provider, w.kind));
		if (event) redisKeys.push(this.eventsKey());
		const args = [
			String(this.ttlMs),
			event ?? '',
			...writes.flatMap((w) => [String(w.expected), versioned(w)]),
		];
		return (await this.client.rpcCas(redisKeys.length, ...redisKeys, ...args)) === 1;
	}

	async now(): Promise<number> {
		return Date.now() + this.offset;
	}

	async reset(key: string): Promise<void> {
		await this.client.del(...KINDS.map((kind) => this.key(key, kind)), this.key(key, 'counters'));
	}

	async addCounters(deltas: Record<string, Record<string, number>>): Promise<void> {
		const m = this.client.multi(); // one round trip; one slot thanks to the scope's hash tag
		let n = 0;
		for (const [provider, d] of Object.entries(deltas)) {
			for (const [name, v] of Object.entries(d))
				if (v) {
					m.hincrby(this.key(provider, 'counters'), name, v);
					n++;
				}
		}
		if (n) await m.exec();
	}

	async readCounters(keys: string[]): Promise<Record<string, Record<string, number>>> {
		const m = this.client.multi();
		for (const k of keys) m.hgetall(this.key(k, 'counters'));
		const res = (await m.exec()) ?? [];
		return Object.fromEntries(
			keys.map((k, i) => [
				k,
				Object.fromEntries(
					Object.entries((res[i]?.[1] ?? {}) as Record<string, string>).map(([n, v]) => [
						n,
						Number(v),
					]),
				),
			]),
		);
	}
}

/** `{`, `}` would change the Cluster hash tag; `:` separates key parts; keep both out. The code
 * is prefix-free, so two names never share a key: `%hh` below U+0100, `%uhhhh` above (a bare
 * `%2028` for U+2028 would equal a space followed by "28"). */
function escapeTag(s: string): string {
	return s.replace(/[{}:%\r\n*\s]/g, (c) => {
		const code = c.charCodeAt(0);
		return code < 0x100
			? `%${code.toString(16).padStart(2, '0')}`
			: `%u${code.toString(16).padStart(4, '0')}`;
	});
}
const escapeName = escapeTag;
